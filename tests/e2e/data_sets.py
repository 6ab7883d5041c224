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


def export_with_sets(net, make, out, shape, outputs, script, rng):
    """Export torch module net (input "x" of shape, batch symbolic) to OUT/model.onnx as opset 13,
    named by script, and write its references from a float64 twin (make() builds one, given
    net's weights) for inputs of batch 1 and 2 drawn from rng."""
    import io

    import numpy as np
    import onnx
    import torch

    buf = io.BytesIO()
    torch.onnx.export(net, torch.zeros(1, *shape[1:]), buf, input_names=["x"], output_names=outputs,
                      dynamic_axes={n: {0: "batch"} for n in ["x"] + outputs}, opset_version=13,
                      do_constant_folding=True)
    model = onnx.load_from_string(buf.getvalue())
    model.producer_name = "ftax " + script
    onnx.checker.check_model(model)
    os.makedirs(out, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))

    net64 = make().double().eval()
    net64.load_state_dict({k: v.double() for k, v in net.state_dict().items()})
    sets = []
    for batch in [1, 2]:
        x = rng.standard_normal((batch, *shape[1:])).astype(np.float32)
        with torch.no_grad():
            ys = net64(torch.from_numpy(x).double())
        ys = [t.float().numpy() for t in (ys if isinstance(ys, tuple) else (ys,))]
        sets.append(([("x", x)], list(zip(outputs, ys))))
    write_sets(out, sets)
    print("wrote", os.path.normpath(out), len(model.graph.node), "nodes")
