"""ftax.InferenceSession: committed models against their reference outputs, the cache, the
error paths, runs from several threads at once."""

import os
import threading
import time

import numpy as np
import pytest

import ftax
from conftest import CFLAGS, MODELS, data_set, load_pb, tolerance

# Models run by default (about a minute each to compile on a loaded 2-core machine);
# FTAX_PY_ALL_MODELS=1 runs every committed model with data sets instead. Models whose test
# pins an input with --bind (a `bind` file) are left out: the session has no bind option.
DEFAULT = [("arith_tiny", 0), ("arith_tiny", 1), ("cnn_small", 0), ("bert_tiny", 0)]


def all_cases():
    if not os.environ.get("FTAX_PY_ALL_MODELS"):
        return DEFAULT
    cases = []
    for d in sorted(MODELS.iterdir()):
        if (d / "model.onnx").exists() and not (d / "bind").exists():
            cases += [(d.name, int(s.name.rsplit("_", 1)[1])) for s in sorted(d.glob("test_data_set_*"))]
    return cases


def session(cache, model, n=0, **kw):
    """A session at data set n's shapes: every input pinned with shapes=."""
    import onnx
    graph = onnx.load(str(MODELS / model / "model.onnx"), load_external_data=False).graph
    inits = {t.name for t in graph.initializer}
    names = [i.name for i in graph.input if i.name not in inits]
    ins, _ = data_set(model, n)
    shapes = {name: a.shape for name, a in zip(names, ins)}
    return ftax.InferenceSession(str(MODELS / model / "model.onnx"), shapes=shapes, cflags=CFLAGS,
                                 cache_dir=str(cache), **kw), names


@pytest.mark.parametrize("model,n", all_cases())
def test_reference_outputs(cache, model, n):
    sess, names = session(cache, model, n)
    ins, want = data_set(model, n)
    assert [i.name for i in sess.get_inputs()] == names
    for arg, a in zip(sess.get_inputs(), ins):
        assert arg.shape == list(a.shape) and arg.dtype == a.dtype
    got = sess.run(None, dict(zip(names, ins)))
    assert len(got) == len(want) == len(sess.get_outputs())
    atol, rtol = tolerance(model)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, "output %d" % k
        if np.issubdtype(w.dtype, np.floating):
            np.testing.assert_allclose(g, w, atol=atol, rtol=rtol, err_msg="%s output %d" % (model, k))
        else:
            np.testing.assert_array_equal(g, w, err_msg="%s output %d" % (model, k))


def test_ort_api_shape(cache):
    sess, _ = session(cache, "arith_tiny", 0)
    ins, outs = sess.get_inputs(), sess.get_outputs()
    assert [(i.name, i.shape, i.type) for i in ins] == [("x", [1, 4, 8], "tensor(float)"), ("y", [1, 1, 8], "tensor(float)")]
    assert [o.name for o in outs] == ["out", "d"]
    x, y = data_set("arith_tiny", 0)[0]
    full = sess.run(None, {"x": x, "y": y})
    # named outputs, in the order asked for
    d, out = sess.run(["d", "out"], {"x": x, "y": y})
    assert np.array_equal(d, full[1]) and np.array_equal(out, full[0])


def test_outputs_belong_to_the_caller(cache):
    sess, _ = session(cache, "arith_tiny", 0)
    x, y = data_set("arith_tiny", 0)[0]
    first = sess.run(None, {"x": x, "y": y})
    keep = [a.copy() for a in first]
    second = sess.run(None, {"x": x * 2 + 1, "y": y})
    for a, k, b in zip(first, keep, second):
        assert np.array_equal(a, k), "a later run changed an earlier run's output"
        assert not np.array_equal(a, b)
        assert a.flags.writeable and a.flags.c_contiguous


def test_cache_second_start(cache):
    s1, _ = session(cache, "arith_tiny", 0)
    t0 = time.monotonic()
    s2, _ = session(cache, "arith_tiny", 0)
    took = time.monotonic() - t0
    assert s2.cache_hit and s2.compile_seconds == 0.0 and s2.artifact_dir == s1.artifact_dir
    assert took < 5, "a cache hit took %.1f s" % took
    s3, _ = session(cache, "arith_tiny", 1)  # other shapes: another entry
    assert s3.artifact_dir != s1.artifact_dir
    # FTAX_CACHE is the default folder
    os.environ["FTAX_CACHE"] = str(cache)
    try:
        x, y = data_set("arith_tiny", 0)[0]
        s4 = ftax.InferenceSession(str(MODELS / "arith_tiny" / "model.onnx"), shapes={"x": x.shape, "y": y.shape},
                                   cflags=CFLAGS)
        assert s4.cache_hit and s4.artifact_dir == s1.artifact_dir
    finally:
        del os.environ["FTAX_CACHE"]


def test_input_errors(cache):
    sess, _ = session(cache, "arith_tiny", 0)
    x, y = data_set("arith_tiny", 0)[0]
    with pytest.raises(ValueError, match=r"missing input\(s\) 'y'.*'x', 'y'"):
        sess.run(None, {"x": x})
    with pytest.raises(ValueError, match=r"unknown input\(s\) 'z'"):
        sess.run(None, {"x": x, "y": y, "z": y})
    with pytest.raises(ValueError, match=r"input 'x': element type float64, expected float32"):
        sess.run(None, {"x": x.astype(np.float64), "y": y})
    with pytest.raises(ValueError, match=r"input 'y': shape \[2, 1, 8\], the model was compiled for \[1, 1, 8\]"):
        sess.run(None, {"x": x, "y": np.concatenate([y, y])})
    with pytest.raises(ValueError, match=r"output 'nope'"):
        sess.run(["nope"], {"x": x, "y": y})
    with pytest.raises(TypeError):
        sess.run(None, [x, y])


def test_compile_errors(cache, tmp_path):
    bert = str(MODELS / "bert_tiny" / "model.onnx")
    with pytest.raises(ftax.CompileError) as e:  # a symbolic dimension left open
        ftax.InferenceSession(bert, cache_dir=str(cache))
    assert e.value.exit_code == 1 and e.value.exit_class == "usage"
    assert "--dim" in e.value.message and "ftaxc exit 1 (usage)" in str(e.value)
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x08\x07 this is not a model")
    with pytest.raises(ftax.CompileError) as e:
        ftax.InferenceSession(str(junk), cache_dir=str(cache))
    assert e.value.exit_code == 2 and e.value.exit_class == "invalid model or input"
    assert "junk.onnx" in e.value.message
    with pytest.raises(FileNotFoundError):
        ftax.InferenceSession(str(tmp_path / "missing.onnx"), cache_dir=str(cache))
    with pytest.raises(ValueError, match="precision"):
        ftax.InferenceSession(bert, dims={"batch": 1, "seq": 8}, precision="fp8", cache_dir=str(cache))
    with pytest.raises(ValueError, match="positive int"):
        ftax.InferenceSession(bert, dims={"batch": 0}, cache_dir=str(cache))
    # nothing half-written is left in the cache by a failed compile
    assert all(p.is_dir() and (p / "libmodel.so").exists() for p in cache.iterdir())


def test_ftaxc_not_found(tmp_path, monkeypatch):
    monkeypatch.setenv("FTAX_FTAXC", str(tmp_path / "no-ftaxc"))
    with pytest.raises(FileNotFoundError, match="FTAX_FTAXC"):
        ftax.find_ftaxc()


def test_threads_at_once_are_bit_identical(cache):
    sess, names = session(cache, "bert_tiny", 0, threads=1)
    ins, _ = data_set("bert_tiny", 0)
    feed = dict(zip(names, ins))
    want = sess.run(None, feed)
    bad, errors = [], []

    def work():
        try:
            for _ in range(25):
                got = sess.run(None, feed)
                if any(not np.array_equal(g, w) for g, w in zip(got, want)):
                    bad.append(1)
        except Exception as exc:  # a worker's failure fails the test
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert not bad, "%d runs differ from the single run" % len(bad)
    assert 1 <= sess.num_contexts <= 9


def test_multi_shape_session(cache):
    """One library of two plans, (batch 1, seq 8) and (batch 2, seq 16): the plan comes from the
    inputs' shapes, each against its data set's reference, the first bit-identical to the
    single-shape session's; other shapes refused with the plans listed."""
    model = str(MODELS / "bert_tiny" / "model.onnx")
    multi = ftax.InferenceSession(model, dims={"batch": [1, 2], "seq": [8, 16]}, cflags=CFLAGS, cache_dir=str(cache))
    assert multi.plans == ["batch=1,seq=8", "batch=2,seq=16"]
    assert [i.shape for i in multi.get_inputs()] == [["batch", "seq"]] * 3
    assert multi.get_outputs()[0].shape == ["batch", "seq", 64]
    single, names = session(cache, "bert_tiny", 0)
    atol, rtol = tolerance("bert_tiny")
    for n in (0, 1):
        ins, want = data_set("bert_tiny", n)
        got = multi.run(None, dict(zip(names, ins)))
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, atol=atol, rtol=rtol)
        if n == 0:
            for g, s in zip(got, single.run(None, dict(zip(names, ins)))):
                assert np.array_equal(g, s), "the seq 8 plan differs from the single-shape library"
    ids = np.ones((1, 12), np.int64)
    with pytest.raises(ValueError, match=r"input shapes input_ids \[1, 12\].*were not compiled; the plans are: "
                                         r"batch=1,seq=8 \(\[1, 8\].*batch=2,seq=16"):
        multi.run(None, {"input_ids": ids, "attention_mask": ids, "token_type_ids": ids})


def test_run_padded(cache):
    """bert_tiny's seq 8/16 session on a 5-token input: padded to 8 with the padding masked, the
    outputs cut back to 5 tokens, close to a session compiled for 5 tokens."""
    model = str(MODELS / "bert_tiny" / "model.onnx")
    multi = ftax.InferenceSession(model, dims={"batch": 1, "seq": [8, 16]}, cflags=CFLAGS, cache_dir=str(cache))
    five = ftax.InferenceSession(model, dims={"batch": 1, "seq": 5}, cflags=CFLAGS, cache_dir=str(cache))
    ids = np.array([[101, 7, 300, 12, 102]], np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    got = multi.run_padded(None, feed)
    want = five.run(None, feed)
    assert got[0].shape == (1, 5, 64) and got[1].shape == (1, 64)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, atol=1e-4, rtol=1e-3)
    with pytest.raises(ValueError, match="no plan holds length 17"):
        long = np.ones((1, 17), np.int64)
        multi.run_padded(None, {"input_ids": long, "attention_mask": long, "token_type_ids": long})
