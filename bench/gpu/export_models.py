#!/usr/bin/env python3
"""Run bench/models/export.py on a machine with a newer torch (the GPU machine: torch 2.x).

export.py targets the TorchScript-based ONNX exporter (torch 1.13 here); torch 2.9 and later
default to the dynamo exporter, whose graphs differ. This wrapper asks for the TorchScript one
(dynamo=False) where the installed torch has the choice, and falls back to torch's default
otherwise, saying so. Arguments are export.py's.

  python3 bench/gpu/export_models.py --out DIR bert_base resnet50
"""
import importlib.util
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("ftax_export", os.path.join(HERE, "..", "models", "export.py"))
export = importlib.util.module_from_spec(spec)
spec.loader.exec_module(export)

_onnx_export = torch.onnx.export


def _export_torchscript(*args, **kwargs):
    try:
        return _onnx_export(*args, dynamo=False, **kwargs)
    except TypeError:  # a torch without the dynamo switch: it has only the TorchScript exporter
        return _onnx_export(*args, **kwargs)
    except Exception as e:  # the TorchScript exporter is gone or failed: torch's default
        print("export_models.py: TorchScript export failed (%s); using torch's default exporter" % e, file=sys.stderr)
        return _onnx_export(*args, **kwargs)


torch.onnx.export = _export_torchscript
print("export_models.py: torch %s" % torch.__version__, file=sys.stderr)
sys.argv = [os.path.join(HERE, "..", "models", "export.py")] + sys.argv[1:]
export.main()
