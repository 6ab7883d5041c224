#!/usr/bin/env python3
"""Stack spills in the hot loops of a compiled object: stack loads and stores per vector FMA.

  spill_check.py OBJECT [--objdump OBJDUMP] [--functions REGEX] [--min-fmas 8] [--max RATIO] [--top N]

Disassembles OBJECT (x86-64 or AArch64, by its ELF header), finds every innermost loop (a
backward branch whose body holds no other backward branch), and for the loops with at least
--min-fmas vector FMAs counts the instructions in the body that read or write the stack
(x86-64: a memory operand at a fixed offset from %rsp or %rbp; AArch64: from sp or x29; an
access by index, into a buffer that lives on the stack, is no spill). Prologues and epilogues are
outside such loops: a register tile that fits its registers has none inside. --functions keeps
the functions whose names match (the kernels' hot ones: GEMM, conv, depthwise, attention,
Winograd tiles), so that a cold kernel pasted beside them does not count. Prints the loops
that spill most and the total ratio; exits 1 when the ratio is over --max (default: report
only), 2 when the object cannot be read.
"""
import argparse
import re
import subprocess
import sys


def elf_machine(path):
    with open(path, "rb") as f:
        h = f.read(20)
    if h[:4] != b"\x7fELF":
        return None
    big = h[5] == 2
    return int.from_bytes(h[18:20], "big" if big else "little")


ARCH = {62: "x86_64", 183: "aarch64"}

FMA_X86 = re.compile(r"^v(f|fn)m(add|sub)(132|213|231)p[sd]\b")
FMA_ARM = re.compile(r"^(fmla|fmls)\b")
# a slot at a fixed offset from the stack or frame pointer (no index register): what a spill or
# its reload addresses; a buffer on the stack read by index (a conv's row buffers) is not one
STACK_X86 = re.compile(r"(^|[ ,])-?(0x[0-9a-f]+)?\(%(rsp|rbp)\)")
STACK_ARM = re.compile(r"\[(sp|x29)(, #-?[0-9]+)?\]")
BRANCH_X86 = re.compile(r"^j[a-z]+$")
BRANCH_ARM = re.compile(r"^(b(\.[a-z]+)?|cbn?z|tbn?z)$")


def parse(objdump, path):
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", path], capture_output=True, text=True)
    if out.returncode:
        sys.exit("spill_check: %s failed: %s" % (objdump, out.stderr.strip()))
    funcs, cur = {}, None
    for line in out.stdout.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if m:
            cur = m.group(2)
            funcs[cur] = []
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if m and cur is not None:
            funcs[cur].append((int(m.group(1), 16), m.group(2), m.group(3)))
    return funcs


def loops(insns, arch):
    """(start, end) index ranges of innermost loops"""
    at = {a: i for i, (a, _, _) in enumerate(insns)}
    branch = BRANCH_X86 if arch == "x86_64" else BRANCH_ARM
    back = []
    for i, (a, op, args) in enumerate(insns):
        if not branch.match(op):
            continue
        m = re.search(r"\b([0-9a-f]+) <", args) or re.match(r"^(?:.*,\s*)?([0-9a-f]+)\b", args)
        if not m:
            continue
        t = int(m.group(1), 16)
        if t <= a and t in at:
            back.append((at[t], i))
    inner = []
    for s, e in back:
        if not any((s2, e2) != (s, e) and s <= s2 and e2 <= e for s2, e2 in back):
            inner.append((s, e))
    return inner


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("obj")
    ap.add_argument("--objdump")
    ap.add_argument("--functions", help="regular expression the functions' names must match")
    ap.add_argument("--min-fmas", type=int, default=8)
    ap.add_argument("--max", type=float)
    ap.add_argument("--top", type=int, default=8)
    o = ap.parse_args()
    try:
        arch = ARCH.get(elf_machine(o.obj))
    except OSError as e:
        print("spill_check: %s" % e)
        return 2
    if not arch:
        print("spill_check: %s is not an x86-64 or AArch64 ELF object" % o.obj)
        return 2
    objdump = o.objdump or ("objdump" if arch == "x86_64" else "aarch64-linux-gnu-objdump")
    fma = FMA_X86 if arch == "x86_64" else FMA_ARM
    stack = STACK_X86 if arch == "x86_64" else STACK_ARM
    rows, tf, ts = [], 0, 0
    keep = re.compile(o.functions) if o.functions else None
    for name, insns in parse(objdump, o.obj).items():
        if keep and not keep.search(name):
            continue
        for s, e in loops(insns, arch):
            body = insns[s:e + 1]
            nf = sum(1 for _, op, _ in body if fma.match(op))
            if arch == "aarch64":  # vector FMAs only: .4s / .2d lanes or by element on a vector
                nf = sum(1 for _, op, args in body if fma.match(op) and re.search(r"\.(4s|2d|8h)", args))
            if nf < o.min_fmas:
                continue
            ns = sum(1 for _, op, args in body if stack.search(args) and not op.startswith("lea") and not op.startswith("prfm") and not op.startswith("prefetch"))
            rows.append((ns / nf, name, nf, ns, len(body)))
            tf += nf
            ts += ns
    rows.sort(reverse=True)
    print("%s: %d innermost loops with >= %d vector FMAs" % (o.obj, len(rows), o.min_fmas))
    for r, name, nf, ns, n in rows[: o.top]:
        print("  %6.2f  %4d FMAs %4d stack  %5d insns  %s" % (r, nf, ns, n, name))
    ratio = ts / tf if tf else 0.0
    print("stack loads/stores per vector FMA: %.3f (%d / %d)" % (ratio, ts, tf))
    if o.max is not None and ratio > o.max:
        print("over the limit %.3f" % o.max)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
