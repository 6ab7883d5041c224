"""ftax from Python: ONNX Runtime's session API over models compiled ahead of time by ftaxc.

    import ftax
    sess = ftax.InferenceSession("model.onnx", dims={"batch": 1, "seq": 128})
    (logits,) = sess.run(None, {"input_ids": ids, "attention_mask": mask})

The first session of a model (and of its options) runs ``ftaxc --shared`` and keeps the library
in a cache folder ($FTAX_CACHE, default ~/.cache/ftax), keyed by the model's bytes, the options
and the ftaxc binary; later sessions load it from there. Standard library and numpy only: the
library is called through ctypes, which releases the GIL for the length of each run.
"""

from ._session import (  # noqa: F401
    CompileError,
    InferenceSession,
    NodeArg,
    find_ftaxc,
)

__version__ = "0.1.0"
__all__ = ["InferenceSession", "NodeArg", "CompileError", "find_ftaxc", "__version__"]
