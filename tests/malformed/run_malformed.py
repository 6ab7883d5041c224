#!/usr/bin/env python3
"""The `malformed` test: hostile and malformed models against ftaxc, ftax-eager and a generated
program (the cases and the exit-code policy: gen_malformed.py).

    python3 run_malformed.py --build BUILD [--work DIR] [--filter GLOB]... [--jobs N]
                             [--failures FILE] [--keep] [--verbose]

Generates the cases into WORK (default BUILD/malformed), runs each tool in its own folder
(WORK/run/<case>/, with an empty output folder out/) under a time limit, a 4 GiB address-space
limit and no core files, and checks for every case:
  - the exit code is one the case accepts (a signal, a time-out or an exit >= 124 never is);
  - stderr contains the expected substrings (the node, value or file at fault) and not the
    forbidden ones;
  - stderr holds no byte below 0x20 other than newline and tab, and no 0x7f;
  - ftaxc that fails leaves no file in its output folder (no OUT.c, OUT.h, OUT.weights, OUT,
    temporaries); one that succeeds leaves no temporaries;
  - where ftaxc succeeds on a code-injection case: every generated .c/.cu/.h lexes (comments and
    literals closed) and no injected identifier (pwn_*) is live code, with and without trigraphs;
    OUT.c and OUT.h compile (with -trigraphs), OUT.h also as C++; the objects and the program hold
    no pwn_ symbol; `OUT --help` exits 0 and the injected constructor's marker file is absent.
Model-level ftaxc cases run through ftax-eager as well (same --dim/--shape flags, synthetic inputs,
one iteration): the same accepted codes, the same message checks.

Prints one line per failing case with the reasons, then `N passed, M failed`; exits 1 if any
failed. --failures FILE writes the failing cases as a table (case, expected, got, first line of
stderr, reasons).
"""
import argparse
import fnmatch
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
MEM_LIMIT = 4 << 30


def limits():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # AddressSanitizer reserves terabytes of address space for its shadow memory: under it the
    # address-space limit would stop every run, and ASan's own allocator limit (allocator_may_return_null
    # is off, so a huge allocation is reported) takes its place
    if "ASAN_OPTIONS" not in os.environ:
        resource.setrlimit(resource.RLIMIT_AS, (MEM_LIMIT, MEM_LIMIT))
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 30, 1 << 30))


def run(cmd, cwd, timeout):
    """(rc, stdout, stderr); rc is -N for signal N, 'timeout' when it ran past the limit."""
    p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=limits, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        return "timeout", out, err


def ctrl_bytes(b):
    bad = sorted({c for c in b if (c < 0x20 and c not in (0x0A, 0x09)) or c == 0x7F})
    return bad


def files_under(d):
    out = []
    for root, _dirs, files in os.walk(d):
        for f in files:
            out.append(os.path.relpath(os.path.join(root, f), d))
    return sorted(out)


# ---- a C lexer small enough to trust: what is left outside comments and literals -----------

TRIGRAPHS = {"??=": "#", "??(": "[", "??/": "\\", "??)": "]", "??'": "^", "??<": "{", "??!": "|", "??>": "}",
             "??-": "~"}


def live_code(text, trigraphs):
    """The text with comments and string/char literals blanked; raises ValueError when one is
    not closed (the file would not lex)."""
    if trigraphs:
        text = re.sub(r"\?\?[=(/)'<!>-]", lambda m: TRIGRAPHS[m.group(0)], text)
    text = re.sub(r"\\\r?\n", "", text)  # line splices
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            out.append(" ")
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise ValueError("unterminated comment at offset %d" % i)
            i = j + 2
            out.append(" ")
        elif text[i] in "\"'":
            q, j = text[i], i + 1
            while j < n and text[j] != q:
                if text[j] == "\n":
                    raise ValueError("newline inside a literal at offset %d" % i)
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise ValueError("unterminated literal at offset %d" % i)
            i = j + 1
            out.append(" ")
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


class Runner:
    def __init__(self, a):
        self.a = a
        self.work = os.path.abspath(a.work)
        self.gen = os.path.join(self.work, "gen")
        self.cc = os.environ.get("CC", "cc")
        self.cxx = os.environ.get("CXX", "c++")
        self.lock = threading.Lock()
        self.results = []

    def generate(self):
        rc = subprocess.call([sys.executable, os.path.join(HERE, "gen_malformed.py"), self.gen])
        if rc:
            sys.exit("run_malformed: gen_malformed.py failed (exit %d)" % rc)
        with open(os.path.join(self.gen, "cases.json")) as f:
            self.manifest = json.load(f)

    def build_program(self):
        d = os.path.join(self.work, "program")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        self.prog = os.path.join(d, "prog")
        model = os.path.join(self.gen, "cases", self.manifest["program_base"])
        rc, _o, err = run([self.a.ftaxc, model, "-o", self.prog, "--cflags", "-O0 -fopenmp"], d, 300)
        self.prog_error = None if rc == 0 else "the program base model did not build (exit %s): %s" % (
            rc, err.decode("utf-8", "replace")[:300])

    def expand(self, args, casedir):
        return [x.replace("{case}", casedir).replace("{prog}", getattr(self, "prog", "")) for x in args]

    # -- one run ---------------------------------------------------------------------------

    def check_common(self, c, rc, err, reasons):
        if rc == "timeout":
            reasons.append("timed out")
        elif rc < 0:
            reasons.append("killed by signal %d" % -rc)
        elif rc >= 124:
            reasons.append("exit %d (crash or hang)" % rc)
        elif rc not in c["expect"]:
            reasons.append("exit %d, expected %s" % (rc, "|".join(map(str, c["expect"]))))
        for s in c["has"]:
            if s.encode("utf-8", "surrogateescape") not in err:
                reasons.append("stderr lacks %r" % (s if len(s) < 60 else s[:60] + "..."))
        for s in c["lacks"]:
            if s.encode() in err:
                reasons.append("stderr contains %r" % s)
        bad = ctrl_bytes(err)
        if bad:
            reasons.append("stderr holds control bytes %s" % " ".join("%02x" % b for b in bad[:8]))

    def run_case(self, c):
        name, tool = c["name"], c["tool"]
        casedir = os.path.join(self.gen, "cases", name)
        rundir = os.path.join(self.work, "run", name)
        shutil.rmtree(rundir, ignore_errors=True)
        outdir = os.path.join(rundir, "out")
        os.makedirs(outdir)
        args = self.expand(c["args"], casedir)
        reasons = []
        timeout = self.a.timeout
        model = os.path.join(casedir, c["model"]) if c.get("model") else None
        out = os.path.join(outdir, "prog")
        if tool in ("ftaxc", "cuda"):
            if "--out-sub" in args:
                k = args.index("--out-sub")
                out = os.path.join(outdir, args[k + 1])
                del args[k:k + 2]
            cmd = [self.a.ftaxc, model, "-o", out] + args
            cmd += ["--target", "cuda", "--emit-only"] if tool == "cuda" else ["--cflags", "-O0 -fopenmp"]
        elif tool == "eager":
            cmd = [self.a.eager, model] + args
        elif tool == "program":
            if self.prog_error:
                self.record(c, name, None, b"", [self.prog_error])
                return
            cmd = [self.prog] + args
            timeout = min(timeout, 20)
        else:
            raise SystemExit("unknown tool %r in case %s" % (tool, name))
        rc, stdout, err = run(cmd, rundir, timeout)
        self.check_common(c, rc, err, reasons)
        bad = ctrl_bytes(stdout) if isinstance(stdout, bytes) else []
        if bad:  # names reach stdout too (ftaxc --dump, --help of a program)
            reasons.append("stdout holds control bytes %s" % " ".join("%02x" % b for b in bad[:8]))
        if tool in ("ftaxc", "cuda"):
            left = files_under(outdir)
            if rc != 0 and left:
                reasons.append("left files behind: %s" % " ".join(left[:6]))
            if rc == 0:
                tmp = [f for f in left if "tmp" in os.path.basename(f)]
                if tmp:
                    reasons.append("left temporaries: %s" % " ".join(tmp[:6]))
                if c["generated"]:
                    self.check_generated(out, tool, rundir, reasons)
        marks = [f for f in files_under(rundir) if os.path.basename(f).startswith("pwned")]
        if marks:
            reasons.append("INJECTED CODE RAN: marker %s" % marks[0])
        self.record(c, name, rc, err, reasons)
        if c["eager"] and tool == "ftaxc":
            self.run_eager_mirror(c, model, args)

    def run_eager_mirror(self, c, model, args):
        name = c["name"] + "@eager"
        rundir = os.path.join(self.work, "run", name)
        shutil.rmtree(rundir, ignore_errors=True)
        os.makedirs(rundir)
        keep = []
        i = 0
        while i < len(args):
            if args[i] in ("--dim", "--shape") and i + 1 < len(args):
                keep += args[i:i + 2]
                i += 2
            else:
                i += 1
        cmd = [self.a.eager, model] + keep + ["--bench", "--warmup", "0", "--iters", "1"]
        rc, _o, err = run(cmd, rundir, self.a.timeout)
        reasons = []
        self.check_common(c, rc, err, reasons)
        marks = [f for f in files_under(rundir) if os.path.basename(f).startswith("pwned")]
        if marks:
            reasons.append("INJECTED CODE RAN: marker %s" % marks[0])
        self.record(c, name, rc, err, reasons)

    def check_generated(self, out, tool, rundir, reasons):
        srcs = [out + (".cu" if tool == "cuda" else ".c"), out + ".h"]
        for s in srcs:
            if not os.path.isfile(s):
                reasons.append("exit 0 but no %s" % os.path.basename(s))
                return
        for s in srcs:
            with open(s, "rb") as f:
                text = f.read().decode("latin-1")
            for tri in (False, True):
                try:
                    code = live_code(text, tri)
                except ValueError as e:
                    reasons.append("%s does not lex%s: %s" % (os.path.basename(s), " (trigraphs)" if tri else "", e))
                    continue
                m = re.search(r"pwn_\w*", code)
                if m:
                    k = m.start()
                    reasons.append("INJECTED CODE LIVE in %s%s: ...%r..." % (
                        os.path.basename(s), " (trigraphs)" if tri else "", code[max(0, k - 40):k + 40]))
        if tool == "cuda":
            return
        obj = os.path.join(rundir, "check.o")
        for cmd, what in (
                ([self.cc, "-fsyntax-only", "-trigraphs", "-x", "c", srcs[1]], "OUT.h as C"),
                ([self.cxx, "-fsyntax-only", "-x", "c++", srcs[1]], "OUT.h as C++"),
                ([self.cc, "-c", "-O0", "-trigraphs", "-fopenmp", "-o", obj, srcs[0]], "OUT.c with -trigraphs")):
            rc, _o, err = run(cmd, rundir, 120)
            if rc != 0:
                reasons.append("%s does not compile: %s" % (what, err.decode("utf-8", "replace").strip()
                                                             .splitlines()[:1]))
        for binary in (obj, out):
            if os.path.isfile(binary):
                rc, sym, _e = run(["nm", "-a", binary], rundir, 60)
                if b"pwn_" in sym:
                    reasons.append("INJECTED SYMBOL in %s" % os.path.basename(binary))
        if os.path.isfile(obj):
            os.unlink(obj)
        if not os.access(out, os.X_OK):
            reasons.append("exit 0 but no program %s" % os.path.basename(out))
            return
        rc, _o, err = run([out, "--help"], rundir, 30)
        if rc != 0:
            reasons.append("OUT --help exits %s: %s" % (rc, err.decode("utf-8", "replace")[:200]))

    def record(self, c, name, rc, err, reasons):
        first = err.decode("utf-8", "replace").strip().splitlines()[:1]
        with self.lock:
            self.results.append(dict(name=name, cls=c["cls"], expect=c["expect"], rc=rc,
                                     first=ascii(first[0])[1:-1][:200] if first else "", reasons=reasons))
            if reasons:
                print("FAIL %s: %s" % (name, "; ".join(reasons)), flush=True)
            elif self.a.verbose:
                print("ok   %s (exit %s)" % (name, rc), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="the build folder (ftaxc, ftax-eager)")
    ap.add_argument("--ftaxc", help="default BUILD/ftaxc")
    ap.add_argument("--eager", help="default BUILD/ftax-eager")
    ap.add_argument("--work", help="default BUILD/malformed")
    ap.add_argument("--filter", action="append", help="run only cases whose name matches this glob (repeatable)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=60, help="seconds per tool run (programs: 20)")
    ap.add_argument("--failures", help="write the failing cases to this file")
    ap.add_argument("--keep", action="store_true", help="keep the run folders of passing cases")
    ap.add_argument("--verbose", "-v", action="store_true")
    a = ap.parse_args()
    a.ftaxc = os.path.abspath(a.ftaxc or os.path.join(a.build, "ftaxc"))
    a.eager = os.path.abspath(a.eager or os.path.join(a.build, "ftax-eager"))
    a.work = a.work or os.path.join(a.build, "malformed")
    for t in (a.ftaxc, a.eager):
        if not os.access(t, os.X_OK):
            sys.exit("run_malformed: %s is not built" % t)
    r = Runner(a)
    shutil.rmtree(os.path.join(r.work, "run"), ignore_errors=True)
    r.generate()
    cases = [c for c in r.manifest["cases"] if not a.filter or any(fnmatch.fnmatch(c["name"], f) for f in a.filter)]
    if not cases:
        sys.exit("run_malformed: no case matches %s" % a.filter)
    if any(c["tool"] == "program" for c in cases):
        r.build_program()
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        for fut in [ex.submit(r.run_case, c) for c in cases]:
            fut.result()
    failed = [x for x in r.results if x["reasons"]]
    if not a.keep:
        for x in r.results:
            if not x["reasons"]:
                shutil.rmtree(os.path.join(r.work, "run", x["name"]), ignore_errors=True)
    if a.failures:
        with open(a.failures, "w") as f:
            f.write("# case\texpected\tgot\tfirst line of stderr\treasons\n")
            for x in sorted(failed, key=lambda x: x["name"]):
                f.write("%s\t%s\t%s\t%s\t%s\n" % (x["name"], "|".join(map(str, x["expect"])), x["rc"], x["first"],
                                                  "; ".join(x["reasons"])))
    print("%d passed, %d failed" % (len(r.results) - len(failed), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
