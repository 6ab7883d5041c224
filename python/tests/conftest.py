"""Shared fixtures: a cache folder for the whole run (each model compiles once), the checkout's
models and their data sets (reference outputs from torch / ONNX Runtime, tests/README.md)."""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))  # the checkout's package, installed or not
MODELS = ROOT / "tests" / "models"

# The generated programs' C flags for these tests: -O1 compiles in about half the time of
# ftaxc's -O3 default and computes the same kernels.
CFLAGS = os.environ.get("FTAX_TEST_CFLAGS", "-O1 -march=native -pthread")


def load_pb(path):
    """A TensorProto file as a numpy array (onnx is a test-only dependency)."""
    import onnx
    from onnx import numpy_helper
    return numpy_helper.to_array(onnx.load_tensor(str(path)))


def data_set(model, n):
    d = MODELS / model / ("test_data_set_%d" % n)
    ins = [load_pb(p) for p in sorted(d.glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1]))]
    outs = [load_pb(p) for p in sorted(d.glob("output_*.pb"), key=lambda p: int(p.stem.split("_")[1]))]
    return ins, outs


def tolerance(model):
    """--atol/--rtol of the model's tolerance file, else the e2e tests' default."""
    atol, rtol = 1e-4, 1e-3
    f = MODELS / model / "tolerance"
    if f.exists():
        words = " ".join(l for l in f.read_text().splitlines() if not l.strip().startswith("#")).split()
        for k, v in zip(words, words[1:]):
            if k == "--atol":
                atol = float(v)
            if k == "--rtol":
                rtol = float(v)
    return atol, rtol


@pytest.fixture(scope="session")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("ftax-cache")
