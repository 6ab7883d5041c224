"""What the e2e scripts that drive ftaxc, a generated program and ftax-eager share: a work folder,
TensorProto files in and out, a command run against the exit code and the messages it must give,
and one list of failures reported at the end.

    c = Checks(build, work)        # BUILD's ftaxc and ftax-eager, files under WORK
    c.run([c.ftaxc, ...], 0)       # exit 0 wanted; failures are collected, not raised
    sys.exit(c.finish("name"))
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


class Checks:
    def __init__(self, build, work):
        self.work = work
        os.makedirs(work, exist_ok=True)
        self.ftaxc, self.eager = os.path.join(build, "ftaxc"), os.path.join(build, "ftax-eager")
        self.failures = []

    def fail(self, msg):
        self.failures.append(msg)

    def pb(self, name, arr, tensor_name=None):
        """WORK/name.pb holding arr, as a tensor called tensor_name (default: name)."""
        path = os.path.join(self.work, name + ".pb")
        with open(path, "wb") as f:
            f.write(numpy_helper.from_array(arr, tensor_name or name).SerializeToString())
        return path

    @staticmethod
    def read(path):
        t = TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        return numpy_helper.to_array(t)

    def model(self, name, nodes, ins, outs, inits=(), opset=13, ir=7, check=True):
        """WORK/name.onnx: one graph, checked by onnx's checker (unless check is false)."""
        g = helper.make_graph(nodes, name, ins, outs, list(inits))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = ir
        if check:
            onnx.checker.check_model(m)
        path = os.path.join(self.work, name + ".onnx")
        onnx.save(m, path)
        return path

    def run(self, cmd, want=0, says=()):
        """Run cmd; a failure unless it exits `want` and its stderr holds every string of `says`."""
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        err = p.stderr.decode("utf-8", "replace")
        miss = [s for s in says if s not in err]
        if p.returncode != want or miss:
            self.fail("%s: exit %d (want %d)%s\n%s" % (" ".join(cmd), p.returncode, want,
                                                      ", stderr lacks %r" % miss if miss else "", err[-800:]))
        return p

    def outputs(self, cmd, d, n_out):
        """Run cmd writing to folder d; its n_out outputs, or None when it failed."""
        if self.run(cmd + ["--output-dir", d]).returncode:
            return None
        return [self.read(os.path.join(d, "output_%d.pb" % k)) for k in range(n_out)]

    def both(self, name, path, inputs, n_out, expect=None, flags=(), atol=0.0):
        """Compile path (with flags) to WORK/name, run the program and ftax-eager (same flags) on
        inputs: both must exit 0 and write the same outputs, and those equal expect (within atol)."""
        self.both_sets(name, path, [(inputs, expect)], n_out, flags, atol)

    def both_sets(self, name, path, sets, n_out, flags=(), atol=0.0):
        """both() for several (inputs, expect) on one compiled program."""
        prog = os.path.join(self.work, name)
        if self.run([self.ftaxc, path, "-o", prog] + list(flags)).returncode:
            return
        for s, (inputs, expect) in enumerate(sets):
            outs = {}
            for tool, cmd in (("program", [prog]), ("eager", [self.eager, path] + list(flags))):
                got = self.outputs(cmd + inputs, os.path.join(self.work, "%s_%s_%d" % (name, tool, s)), n_out)
                if got is not None:
                    outs[tool] = got
            if len(outs) < 2:
                continue
            for k in range(n_out):
                a, b = outs["program"][k], outs["eager"][k]
                if a.dtype != b.dtype or a.shape != b.shape or not np.array_equal(a, b, equal_nan=True):
                    self.fail("%s, set %d: output %d differs: program %r, eager %r" % (name, s, k, a, b))
                if expect is not None and (a.shape != expect[k].shape or
                                           not np.allclose(a, expect[k], rtol=0, atol=atol)):
                    self.fail("%s, set %d: output %d is %r, expected %r" % (name, s, k, a, expect[k]))

    def finish(self, name):
        for f in self.failures:
            sys.stderr.write("FAIL " + f + "\n")
        sys.stdout.write("%s: %d failures\n" % (name, len(self.failures)))
        return 1 if self.failures else 0
