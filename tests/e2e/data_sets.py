"""The test data sets the e2e model generators write beside a model: OUT/test_data_set_K/
input_J.pb and output_J.pb, one TensorProto each (the layout of ONNX's own node tests)."""

import os

from onnx import numpy_helper


def write_sets(out, sets):
    """sets: [(inputs, outputs)], each a list of (name, numpy array)."""
    for k, (ins, outs) in enumerate(sets):
        ds = os.path.join(out, "test_data_set_%d" % k)
        os.makedirs(ds, exist_ok=True)
        for kind, arrays in (("input", ins), ("output", outs)):
            for j, (nm, arr) in enumerate(arrays):
                with open(os.path.join(ds, "%s_%d.pb" % (kind, j)), "wb") as f:
                    f.write(numpy_helper.from_array(arr, nm).SerializeToString())
