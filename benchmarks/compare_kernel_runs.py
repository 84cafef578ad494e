"""Two recorded kernel benchmarks side by side: every configuration both timed, new / old.

    python benchmarks/compare_kernel_runs.py OLD/kernels.csv NEW/kernels.csv [--out comparison.md]

Rows are matched on (impl, unit, stencil, dtype, precision, t, grid); the table lists the slowest ratios first,
so that a configuration that got slower cannot hide in a median.  Timings of two runs are comparable only as
far as the runs are (same GPU kind; each file names its GPU and date).
"""
from __future__ import annotations

import argparse
import csv
import statistics


def load(path):
    with open(path) as f:
        return {(r["impl"], r["unit"], r["stencil"], r["dtype"], r["precision"], int(r["fuse"]), r["grid"]): r
                for r in csv.DictReader(f)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--out")
    ap.add_argument("--show", type=int, default=15, help="slowest ratios listed")
    args = ap.parse_args(argv)
    old, new = load(args.old), load(args.new)
    common = sorted(set(old) & set(new))
    ratios = sorted((float(new[k]["gstencils"]) / float(old[k]["gstencils"]), k) for k in common)
    first = next(iter(old.values()))
    last = next(iter(new.values()))
    lines = [f"# {last['gpu']} {last['date']} against {first['gpu']} {first['date']}", "",
             f"{len(common)} configurations in both runs ({len(old)} and {len(new)} rows); new / old GStencils/s: "
             f"median {statistics.median(r for r, _ in ratios):.3f}, lowest {ratios[0][0]:.3f}, "
             f"highest {ratios[-1][0]:.3f}; {sum(r < 1 for r, _ in ratios)} slower.", "",
             "| impl | unit | configurations | median | lowest | highest |", "|---|---|---|---|---|---|"]
    groups = {}
    for r, k in ratios:
        groups.setdefault((k[0], k[1]), []).append(r)
    for (impl, unit), rs in sorted(groups.items()):
        lines.append(f"| {impl} | {unit} | {len(rs)} | {statistics.median(rs):.3f} | {min(rs):.3f} | {max(rs):.3f} |")
    lines += ["", "| new / old | impl | stencil | dtype | t | old GSt/s | new GSt/s |", "|---|---|---|---|---|---|---|"]
    shown = ratios[:args.show] + [x for x in ratios[-args.show:] if x not in ratios[:args.show]]
    for r, k in shown:
        lines.append(f"| {r:.3f} | {k[0]} | {k[2]} | {k[3]} | {k[5]} | {float(old[k]['gstencils']):.1f} | "
                     f"{float(new[k]['gstencils']):.1f} |")
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
