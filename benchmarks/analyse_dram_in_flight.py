"""Little's law against the DRAM microbenchmark (benchmarks/microbench_dram_in_flight.py; no GPU needed).

    python benchmarks/analyse_dram_in_flight.py DIR/in-flight.csv > DIR/summary.md

Fits the refined model's form B = 1/(1/B_max + L/F) with F the bytes in flight per SM (the form of B_eff in
docs/model.md), and, beside it, the same form over the requests in flight per SM and over the warps per SM; prints
each fit's constants and errors, and the measured bandwidths by load width at equal bytes in flight, which is what
tells whether the bytes alone decide the bandwidth.
"""
from __future__ import annotations

import csv
import math
import statistics
import sys

import numpy as np
from scipy.optimize import least_squares


def fit(x: np.ndarray, b: np.ndarray):
    """(B_max, L, errors) of B = 1/(1/B_max + L/x) fitted in log space."""
    def res(p):
        bm, lat = np.exp(p)
        return np.log(1 / (1 / bm + lat / x)) - np.log(b)
    p = least_squares(res, x0=[math.log(b.max()), math.log(np.median(x / b))]).x
    bm, lat = np.exp(p)
    pred = 1 / (1 / bm + lat / x)
    return bm, lat, pred / b - 1


def main(path: str) -> int:
    rows = [r for r in csv.DictReader(open(path)) if r["checked"] == "True"]
    gpu = rows[0]["gpu"]
    b = np.array([float(r["tbs"]) for r in rows])
    print(f"# DRAM bandwidth against what is in flight ({gpu}, {path})\n")
    print(f"{len(rows)} configurations, every one checked.  B = 1/(1/B_max + L/x), fitted in log space:\n")
    print("| x | B_max, TB/s | L (x per TB/s) | median abs error | worst |")
    print("|---|---|---|---|---|")
    for key, label in (("bytes_in_flight_per_sm", "bytes in flight per SM"),
                       ("requests_in_flight_per_sm", "requests in flight per SM"),
                       ("warps_per_sm", "warps per SM")):
        x = np.array([float(r[key]) for r in rows])
        bm, lat, err = fit(x, b)
        print(f"| {label} | {bm:.3f} | {lat:.4g} | {100 * np.median(abs(err)):.1f} % | {100 * np.max(abs(err)):.0f} % |")
    print("\nMeasured TB/s by bytes in flight per SM (KiB) and load width W (bytes per thread and load):\n")
    by = {}
    for r in rows:
        by.setdefault(int(r["bytes_in_flight_per_sm"]) // 1024, {}).setdefault(int(r["W"]), []).append(float(r["tbs"]))
    print("| KiB in flight per SM | W = 4 | W = 8 | W = 16 |")
    print("|---|---|---|---|")
    for kib in sorted(by):
        cells = [(f"{statistics.median(by[kib][w]):.2f} ({len(by[kib][w])})" if w in by[kib] else "–") for w in (4, 8, 16)]
        print(f"| {kib} | " + " | ".join(cells) + " |")
    print("\n(median over the configurations of that cell, their count in brackets)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
