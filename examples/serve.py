#!/usr/bin/python3
"""Serving a model over HTTP from several threads with one ftax session (docs/api.md).

    PYTHONPATH=python /usr/bin/python3 examples/serve.py tests/models/bert_tiny/model.onnx \
        --dim batch=1 --dim seq=8 --port 8000
    curl -s localhost:8000/         # the inputs and outputs, as JSON
    curl -s -d '{"inputs": {"input_ids": [[1,2,3,4,5,6,7,8]], ...}}' localhost:8000/run

The standard library's ThreadingHTTPServer answers each request on a thread of its own; every
thread calls the same InferenceSession, which hands each concurrent run a context (an arena) of
its own over the session's one copy of the weights, and ctypes releases the GIL while the model
runs. --selftest starts the server on a free port, sends requests from several client threads at
once and checks every answer against the same request run directly; exit 0 when all match.
"""

import argparse
import json
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import ftax  # noqa: E402


def make_handler(sess):
    inputs = {i.name: i for i in sess.get_inputs()}

    class Handler(BaseHTTPRequestHandler):
        def _send(self, code, obj):
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self._send(200, {
                "inputs": [{"name": a.name, "shape": a.shape, "type": a.type} for a in sess.get_inputs()],
                "outputs": [{"name": a.name, "shape": a.shape, "type": a.type} for a in sess.get_outputs()],
            })

        def do_POST(self):
            try:
                req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                feed = {k: np.asarray(v, dtype=inputs[k].dtype) if k in inputs else v
                        for k, v in req["inputs"].items()}
                outs = sess.run(req.get("outputs"), feed)
            except (ValueError, KeyError, TypeError) as e:  # the session's input checks say what is wrong
                return self._send(400, {"error": str(e)})
            names = req.get("outputs") or [o.name for o in sess.get_outputs()]
            self._send(200, {"outputs": {n: o.tolist() for n, o in zip(names, outs)}})

        def log_message(self, *args):
            pass

    return Handler


def selftest(sess, server, clients=6, per_client=20):
    url = "http://127.0.0.1:%d/run" % server.server_address[1]
    rng = np.random.default_rng(0)
    cases = []
    for _ in range(4):
        feed = {}
        for a in sess.get_inputs():
            if a.dtype.kind == "f":
                feed[a.name] = rng.standard_normal(a.shape).astype(a.dtype)
            else:  # token ids, masks, type ids: small non-negative integers
                feed[a.name] = rng.integers(0, 2, size=a.shape).astype(a.dtype)
        cases.append((feed, sess.run(None, feed)))
    bad, done = [], []

    def client(c):
        for r in range(per_client):
            feed, want = cases[(c + r) % len(cases)]
            body = json.dumps({"inputs": {k: v.tolist() for k, v in feed.items()}}).encode()
            with urllib.request.urlopen(urllib.request.Request(url, data=body)) as resp:
                got = json.loads(resp.read())["outputs"]
            for o, w in zip(sess.get_outputs(), want):
                if not np.array_equal(np.asarray(got[o.name], dtype=w.dtype), w):
                    bad.append((c, r, o.name))
            done.append(1)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("selftest: %d requests from %d client threads, %d wrong, %d contexts made"
          % (len(done), clients, len(bad), sess.num_contexts))
    return 0 if len(done) == clients * per_client and not bad else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--dim", action="append", default=[], help="SYM=N, as ftaxc --dim")
    ap.add_argument("--threads", type=int, default=1, help="threads per run (default 1: one per request)")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--cflags", help="C compiler flags for ftaxc (default: its own)")
    ap.add_argument("--selftest", action="store_true")
    args = ap.parse_args()
    dims = {k: int(v) for k, v in (d.split("=", 1) for d in args.dim)}
    sess = ftax.InferenceSession(args.model, dims=dims, threads=args.threads, cflags=args.cflags)
    print("model ready (%s, %.1f s to compile)" % ("cached" if sess.cache_hit else "compiled", sess.compile_seconds))
    server = ThreadingHTTPServer(("127.0.0.1", 0 if args.selftest else args.port), make_handler(sess))
    if not args.selftest:
        print("serving on http://127.0.0.1:%d" % server.server_address[1])
        server.serve_forever()
        return 0
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        return selftest(sess, server)
    finally:
        server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
