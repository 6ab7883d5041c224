#!/usr/bin/env python3
"""The `baremetal` tests: a committed model as a freestanding library for a Cortex-M7, checked for
the symbols it needs and, with --run, run on an emulated board and compared with the x86 program.

    python3 run_baremetal.py --build BUILD --model MODEL_DIR [--set DATA_SET_DIR] --work DIR
                             [--run] [--no-libm] [--cc arm-none-eabi-gcc] [--qemu qemu-system-arm]
                             [--opt -O1] [--timeout 120]

1. `ftaxc --freestanding --cc CC --cflags "OPT CPU_FLAGS"` builds MODEL.o (CPU_FLAGS below: the
   Cortex-M7 of the MPS2 AN500 board, hard float).
2. `CC-nm -u MODEL.o` may name only what allowed_symbols.txt allows: memcpy/memset/memmove, the
   float libm functions, libgcc's helpers (64-bit division, conversions). Anything else (malloc,
   printf, pthread_*, mmap, ...) fails the test, named. With --no-libm, a libm function does too
   (cnn_small computes nothing libm has: the kernels' switches over every scalar op must be cut
   to its ops).
With --run, also:
3. the x86 program (plain ftaxc, at the data set's shapes) runs on the data set's inputs;
4. startup.c, main.c, mps2-an500.ld and a data.c written here from the inputs link with MODEL.o
   and newlib's libm/libc (-nostdlib: nothing else) into an ELF image;
5. `qemu-system-arm -M mps2-an500 -semihosting` runs it under a time limit; it prints every output
   as hex ("output K HEX"), then "ftb: ok" when a second run gave the same bytes;
6. each output is compared with the x86 program's by ftax-compare at the e2e tolerance
   (--atol 1e-4 --rtol 1e-3, or MODEL_DIR/tolerance), and with the data set's own reference.

The compiler runs at --opt (default -O1): the kernels' 16-float vectors lower to scalar code on a
Cortex-M and GCC takes minutes over a model at -O2, too long for CI; the code is the same C.

Exit: 0 pass, 2 a tool is missing or the data set cannot be read, 4 a build failed, 5 a symbol
outside the list or outputs that differ, 6 the program failed or timed out under qemu.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CPU_FLAGS = ["-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16"]


def fail(code, msg):
    print(f"baremetal: {msg}")
    sys.exit(code)


def run(cmd, log, timeout=None, **kw):
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as ex:
        out = ex.stdout.decode(errors="replace") if isinstance(ex.stdout, bytes) else (ex.stdout or "")
        with open(log, "a") as f:
            f.write(out + f"\n(timed out after {timeout} s)\n")
        return None, out
    with open(log, "a") as f:
        f.write(p.stdout)
    return p.returncode, p.stdout


def shape_flags(build, model, data_set, log):
    rc, out = run([os.path.join(build, "ftax-testtool"), "shape-flags", os.path.join(model, "model.onnx"), data_set], log)
    if rc != 0:
        fail(2, f"cannot read the shapes of {data_set}: {out.strip()}")
    return [a for a in out.split("\n") if a]


def allowed_patterns():
    pats = []
    with open(os.path.join(HERE, "allowed_symbols.txt")) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                pats.append(re.compile("^(" + line + ")$"))
    return pats


def check_symbols(nm, obj, log, no_libm):
    rc, out = run([nm, "-u", obj], log)
    if rc != 0:
        fail(4, f"{nm} -u {obj} failed")
    syms = [line.split()[-1] for line in out.split("\n") if line.strip()]
    pats = allowed_patterns()
    bad = [s for s in syms if not any(p.match(s) for p in pats)]
    if bad:
        fail(5, f"{obj} needs symbols outside tests/baremetal/allowed_symbols.txt: {' '.join(bad)}")
    libm = [s for s in syms if not re.match(r"^(memcpy|memset|memmove|__aeabi_.*)$", s)]
    if no_libm and libm:
        fail(5, f"{obj} needs libm functions its model does not compute: {' '.join(libm)}")
    return syms


def c_bytes(data):
    return ",\n".join(",".join(str(b) for b in data[i:i + 32]) for i in range(0, len(data), 32))


def write_data_c(path, name, guard, inputs, n_out):
    """data.c: the inputs as const arrays, two sets of output buffers, their sizes."""
    lines = [f'#include <stddef.h>\n#include "{name}.h"\n']
    for k, raw in enumerate(inputs):
        lines.append(f"static const unsigned char in{k}[{max(len(raw), 1)}] __attribute__((aligned(64))) = {{\n"
                     f"{c_bytes(raw) or '0'}\n}};")
        lines.append(f"_Static_assert({len(raw)} == {guard}_INPUT_{k}_BYTES, \"input {k} size\");")
    for k in range(n_out):
        for tag in ("a", "b"):
            lines.append(f"static unsigned char out{tag}{k}[{guard}_OUTPUT_{k}_BYTES + 1] __attribute__((aligned(64)));")
    ins = ", ".join(f"in{k}" for k in range(len(inputs))) or "NULL"
    lines.append(f"const void *const ftb_inputs[] = {{{ins}}};")
    lines.append("void *const ftb_outputs[] = {" + ", ".join(f"outa{k}" for k in range(n_out)) + "};")
    lines.append("void *const ftb_outputs_again[] = {" + ", ".join(f"outb{k}" for k in range(n_out)) + "};")
    lines.append("const size_t ftb_output_bytes[] = {" + ", ".join(f"{guard}_OUTPUT_{k}_BYTES" for k in range(n_out)) + "};")
    lines.append(f"const int ftb_num_outputs = {n_out};")
    lines.append(f"_Static_assert({n_out} == {guard}_NUM_OUTPUTS, \"outputs\");")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def x86_reference(args, model, data_set, flags, work, log):
    prog = os.path.join(work, "x86", "prog")
    cmd = [os.path.join(args.build, "ftaxc"), os.path.join(model, "model.onnx"), "-o", prog] + flags
    if os.environ.get("FTAX_PROGRAM_CFLAGS"):
        cmd += ["--cflags", os.environ["FTAX_PROGRAM_CFLAGS"]]
    if run(cmd, log)[0] != 0:
        fail(4, f"ftaxc failed for the x86 program (log: {log})")
    ins = input_files(data_set)
    if run([prog] + ins + ["--output-dir", os.path.join(work, "x86", "out")], log)[0] != 0:
        fail(6, f"the x86 program failed (log: {log})")
    return os.path.join(work, "x86", "out")


def input_files(data_set):
    ins, k = [], 0
    while os.path.exists(os.path.join(data_set, f"input_{k}.pb")):
        ins.append(os.path.join(data_set, f"input_{k}.pb"))
        k += 1
    return ins


def link_image(args, name, guard, lib_dir, data_set, n_out, work, log):
    from onnx import TensorProto, numpy_helper
    raws = []
    for path in input_files(data_set):
        t = TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        raws.append(numpy_helper.to_array(t).tobytes())
    data_c = os.path.join(work, "data.c")
    write_data_c(data_c, name, guard, raws, n_out)
    elf = os.path.join(work, name + ".elf")
    cmd = [args.cc] + CPU_FLAGS + [args.opt, "-ffreestanding", "-nostdlib", "-ffunction-sections", "-fdata-sections",
                                   "-I", lib_dir, "-I", HERE, f"-DFTB_MODEL={name}", f'-DFTB_HEADER="{name}.h"',
                                   "-T", os.path.join(HERE, "mps2-an500.ld"), "-Wl,--gc-sections",
                                   os.path.join(HERE, "startup.c"), os.path.join(HERE, "main.c"), data_c,
                                   os.path.join(lib_dir, name + ".o"), "-lm", "-lc", "-lgcc", "-o", elf]
    if run(cmd, log)[0] != 0:
        fail(4, f"linking the bare-metal image failed (log: {log})")
    return elf


def run_qemu(args, elf, log):
    cmd = [args.qemu, "-M", "mps2-an500", "-nographic", "-monitor", "none", "-serial", "none",
           "-semihosting-config", "enable=on,target=native", "-kernel", elf]
    rc, out = run(cmd, log, timeout=args.timeout)
    if rc is None:
        fail(6, f"qemu timed out after {args.timeout} s (log: {log})")
    if rc != 0 or "ftb: ok" not in out:
        fail(6, f"the bare-metal program failed (qemu exit {rc}): {out.strip()[-300:]}")
    return {int(m.group(1)): bytes.fromhex(m.group(2)) for m in re.finditer(r"^output (\d+) ([0-9a-f]*)$", out, re.M)}


def compare_outputs(args, model, data_set, x86_out, outs, work, log):
    from onnx import TensorProto, numpy_helper
    import numpy as np
    tol = ["--atol", "1e-4", "--rtol", "1e-3"]
    if os.path.exists(os.path.join(model, "tolerance")):
        with open(os.path.join(model, "tolerance")) as f:
            tol = " ".join(l for l in f.read().split("\n") if not l.strip().startswith("#")).split()
    compare = os.path.join(args.build, "ftax-compare")
    bad = []
    k = 0
    while os.path.exists(os.path.join(x86_out, f"output_{k}.pb")):
        t = TensorProto()
        with open(os.path.join(x86_out, f"output_{k}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        ref = numpy_helper.to_array(t)
        got = outs.get(k)
        if got is None or len(got) != ref.nbytes:
            fail(5, f"output {k}: the bare-metal program printed {len(got) if got else 0} bytes, x86 has {ref.nbytes}")
        arr = np.frombuffer(got, dtype=ref.dtype).reshape(ref.shape)
        mine = os.path.join(work, f"arm_output_{k}.pb")
        with open(mine, "wb") as f:
            f.write(numpy_helper.from_array(arr, t.name).SerializeToString())
        refs = [os.path.join(x86_out, f"output_{k}.pb"), os.path.join(data_set, f"output_{k}.pb")]
        for r in refs:
            if os.path.exists(r) and run([compare, r, mine] + tol, log)[0] != 0:
                bad.append(f"output {k} vs {r}")
        k += 1
    if k == 0:
        fail(2, "the x86 program wrote no output")
    if bad:
        fail(5, f"outputs differ beyond {' '.join(tol)}: {'; '.join(bad)} (log: {log})")
    return k, tol


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--set")
    ap.add_argument("--work", required=True)
    ap.add_argument("--run", action="store_true")
    ap.add_argument("--no-libm", action="store_true")
    ap.add_argument("--cc", default="arm-none-eabi-gcc")
    ap.add_argument("--qemu", default="qemu-system-arm")
    ap.add_argument("--opt", default="-O1")
    ap.add_argument("--timeout", type=int, default=120)
    args = ap.parse_args()
    model = os.path.abspath(args.model)
    data_set = args.set or os.path.join(model, "test_data_set_0")
    name = os.path.basename(model.rstrip("/"))
    guard = name.upper()
    tools = [args.cc, re.sub(r"gcc$", "nm", args.cc)] + ([args.qemu] if args.run else [])
    missing = [t for t in tools if not shutil.which(t)]
    if missing:
        fail(2, f"missing {' '.join(missing)} (Debian: gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm; "
                "scripts/install-deps.sh installs them)")
    work = os.path.abspath(os.path.join(args.work, name))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    log = os.path.join(work, "log")
    flags = shape_flags(args.build, model, data_set, log)

    lib = os.path.join(work, "lib", name)
    cmd = [os.path.join(args.build, "ftaxc"), os.path.join(model, "model.onnx"), "-o", lib, "--freestanding",
           "--cc", args.cc, "--cflags", " ".join([args.opt] + CPU_FLAGS + ["-nostdlib"])] + flags
    if run(cmd, log)[0] != 0:
        fail(4, f"ftaxc --freestanding failed (log: {log})")
    syms = check_symbols(tools[1], lib + ".o", log, args.no_libm)
    print(f"{name}: freestanding object needs only {' '.join(syms) or 'nothing'}")
    if not args.run:
        return 0
    x86_out = x86_reference(args, model, data_set, flags, work, log)
    n_out = len([f for f in os.listdir(x86_out) if re.match(r"output_\d+\.pb$", f)])
    elf = link_image(args, name, guard, os.path.dirname(lib), data_set, n_out, work, log)
    outs = run_qemu(args, elf, log)
    k, tol = compare_outputs(args, model, data_set, x86_out, outs, work, log)
    print(f"{name}: bare-metal run on mps2-an500 (Cortex-M7) matches x86 ({k} output(s), {' '.join(tol)})")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
