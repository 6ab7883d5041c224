#!/usr/bin/env python3
"""The coefficient table of ft_v16_gelu (templates/c/fastmath.h): Phi(-a), the normal
distribution's lower tail at -a, on 16 intervals of a = |x| of width H centred on k H, each a
degree-7 polynomial in r = a - k H. Each is fitted for relative error (least squares on
Chebyshev nodes, reweighted towards the worst nodes: Lawson's iteration), in double, then rounded
to float. Prints the C initializer (one row per power of r) and the worst relative error of the
rounded polynomials. Needs numpy (Debian: python3-numpy).

    python3 scripts/fit_gelu_table.py
"""
import math

import numpy as np

INTERVALS, DEGREE = 16, 7
H = float(np.float32(0.36))  # the float the kernel multiplies by: centres are k * H exactly


def tail(a):
    return 0.5 * math.erfc(a / math.sqrt(2.0))


def fit(k):
    lo, hi = (-H / 2 if k else 0.0), H / 2
    nodes = 400
    r = np.array([(lo + hi) / 2 + (hi - lo) / 2 * math.cos(math.pi * (i + 0.5) / nodes) for i in range(nodes)])
    f = np.array([tail(k * H + x) for x in r])
    v = np.vander(r, DEGREE + 1, increasing=True) / f[:, None]
    w = np.full(nodes, 1.0 / nodes)
    for _ in range(60):
        sw = np.sqrt(w)
        c = np.linalg.lstsq(v * sw[:, None], sw, rcond=None)[0]
        w = w * np.abs(v @ c - 1)
        w /= w.sum()
    c = np.float32(c).astype(np.float64)
    rr = np.linspace(lo, hi, 4001)
    err = np.max(np.abs(np.polyval(c[::-1], rr) / np.array([tail(k * H + x) for x in rr]) - 1))
    return c, err


def main():
    fits = [fit(k) for k in range(INTERVALS)]
    print("/* worst relative error of the float coefficients: %.2g */" % max(e for _, e in fits))
    for d in range(DEGREE + 1):
        print("    {" + ", ".join("%.9ef" % c[d] for c, _ in fits) + "},")


if __name__ == "__main__":
    main()
