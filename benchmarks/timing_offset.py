"""The fixed cost per timed interval in the recorded kernel benchmarks, from two runs of the same kernels.

The H100 kernel benchmarks of 2026-11-22 and 2026-11-23 timed the same 2D CUDA-core
kernel configurations (same threads, columns, rows per iteration, registers) over 12
and over 4 sweeps per repeat.  If a timed interval of N sweeps lasts F + N·k, the two
runs give k (device time per sweep) and F (what the interval holds besides the sweeps:
the host's latency to issue the first launches), and the share F / (F + 4k) by which the
4-sweep figures read low.  Writes a Markdown table to stdout.

    python benchmarks/timing_offset.py > validation/results/timing-offset-2026-11-23/offset.md
"""
import csv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "validation" / "results"
RUNS = (ROOT / "h100-sxm-2026-11-22" / "kernels.csv", ROOT / "h100-sxm-2026-11-23" / "kernels" / "kernels.csv")


def load(path):
    out = {}
    for r in csv.DictReader(path.open()):
        if r["unit"] == "cuda_core" and r["stencil"] == "Box-2D1R" and "step per call" not in r["kernel"]:
            out[(r["dtype"], int(r["fuse"]))] = (int(r["steps"]), float(r["seconds"]), r["kernel"].split(", halo")[0])
    return out


def main():
    a, b = (load(p) for p in RUNS)
    print("| dtype | t | kernel | sweeps | device time per sweep k | fixed cost F | 4-sweep figure low by |")
    print("|---|---|---|---|---|---|---|")
    for key in sorted(set(a) & set(b)):
        (s1, t1, c1), (s2, t2, c2) = a[key], b[key]
        if c1 != c2:
            continue  # a different configuration: nothing to difference
        n1, n2 = s1 // key[1], s2 // key[1]
        k = (t1 - t2) / (n1 - n2)
        f = t2 - n2 * k
        print(f"| {key[0]} | {key[1]} | {c1} | {n1} vs {n2} | {k * 1e3:.3f} ms | {f * 1e6:.0f} µs | {f / t2:.1%} |")


if __name__ == "__main__":
    main()
