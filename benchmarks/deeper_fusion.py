"""Where capacity, not bandwidth, stops the bundled kernels' fusion, and what the model says deeper fusion would gain
(issue 21, target 7: deeper fusion "if the model predicts a gain").  No GPU.

    python benchmarks/deeper_fusion.py [--spec h100-calibrated] [--corpus DIR] [--out DIR]

For every corpus stencil (and Star-3D4R, a Devito ``space_order=8`` operator), unit and dtype:

* the kernel's deepest runnable depth (its capacity: the fused radius it takes, the shared memory, the registers the
  planner allows), from the refined model's refusals (tcadvisor.support.depth_refusal, what the kernels refuse);
* the refined model's best depth within it: "at the edge" when that is the deepest runnable depth, i.e. the
  model's predicted curve still rises where the kernel stops;
* beyond the edge the refined model has no plan to read; the estimate holds the edge's efficiency (refined over the
  base model's roofline at the same depth) and follows the roofline to t = 16: an upper estimate where efficiency
  falls with depth, as it does for every unit of the corpus;
* measured (the corpus, on the grid of the longest recorded curve): the best recorded depth and whether it is the deepest runnable one.

A configuration is a candidate for deeper fusion (clusters, distributed shared memory) where the measured best and
the refined best are both at the edge and the estimate gains more than 10 %.  Writes deeper-fusion.csv and
summary.md into --out.
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcadvisor.advisor import AlphaChoice, evaluate_unit  # noqa: E402
from tcadvisor.errors import TcAdvisorError  # noqa: E402
from tcadvisor.hardware import find_spec  # noqa: E402
from tcadvisor.stencil import parse_stencil  # noqa: E402
from tcadvisor.validate.compare import bundled_profile  # noqa: E402
from tcadvisor.validate.corpus import corpus_stencils  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNITS = ("cuda_core", "tensor_core", "sparse_tensor_core")
DTYPES = ("double", "float", "half", "bfloat16")
DEPTHS = list(range(1, 17))
GAIN = 1.10


def limit_kind(reason: str) -> str:
    """What stops the kernel, in one word: the fused radius its instruction geometry takes, the kernel lines its
    line mask holds, the registers a tile needs, or the shared memory a block may have."""
    if "fused radius" in reason:
        return "fused radius"
    if "kernel lines" in reason or "kernel rows" in reason:
        return "kernel lines"
    if "registers" in reason or "spill" in reason:
        return "registers"
    if "shared memory" in reason or "KiB" in reason:
        return "shared memory"
    return "other"


def measured_curves(folder: str) -> dict:
    """(stencil name, offsets, unit, dtype) -> {depth: GStencils/s} on the grid with the most depths recorded."""
    curves: dict = defaultdict(dict)
    with open(os.path.join(folder, "corpus.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if r["status"] != "ok" or not r["impl"].startswith("tcadvisor-"):
                continue
            key = (r["stencil"], r["offsets"], r["unit"], r["dtype"])
            curves[key].setdefault(r["grid"], {})[int(r["fuse"])] = float(r["gstencils"])
    return {key: max(grids.values(), key=len) for key, grids in curves.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default="h100-calibrated")
    ap.add_argument("--corpus", default=os.path.join(ROOT, "validation/results/h100-sxm-2026-11-27/corpus"))
    ap.add_argument("--out", default=os.path.join(ROOT, "validation/results/h100-sxm-2026-11-27/deeper-fusion"))
    args = ap.parse_args(argv)
    spec = find_spec(args.spec)
    measured = measured_curves(args.corpus)
    cc = bundled_profile("cuda_core")
    rows = []
    bests: dict = defaultdict(dict)  # (stencil, dtype) -> unit -> the refined model's best within the kernel's reach
    for st in list(corpus_stencils()) + [parse_stencil("Star-3D4R")]:
        offsets = "" if st.shape in ("box", "star") else ";".join(",".join(map(str, o)) for o in st.offsets)
        for unit in UNITS:
            impl = bundled_profile(unit)
            for dtype in DTYPES:
                precision, _ = impl.precision_for(dtype, spec)
                if precision is None:
                    continue
                cc_precision, _ = cc.precision_for(dtype, spec)
                cc_peak = spec.peak("cuda_core", cc_precision) if cc_precision else None
                try:
                    ref = evaluate_unit(unit, impl, st, dtype, spec, DEPTHS, AlphaChoice(), cc_peak, model="refined",
                                        cc_impl=cc if cc_precision else None)
                    base = evaluate_unit(unit, impl, st, dtype, spec, DEPTHS, AlphaChoice(), cc_peak, model="base")
                except TcAdvisorError:
                    continue
                runs = [o for o in ref if o.available and not o.kernel_refused]
                if not runs:
                    continue
                cap = max(o.fuse for o in runs)
                bests[(st.name, dtype)][unit] = max(o.gstencils for o in runs)
                if cap == DEPTHS[-1] or any(o.fuse > cap and not o.kernel_refused for o in ref):
                    continue  # stopped by the search's limit (or a gap), not by the kernel's capacity
                best = max(runs, key=lambda o: o.gstencils)
                roof = {o.fuse: o.roof for o in base if o.available}
                edge = next(o for o in runs if o.fuse == cap)
                eff = edge.gstencils / roof[cap]
                beyond = {t: eff * roof[t] for t in DEPTHS if t > cap and t in roof}
                t_x = max(beyond, key=beyond.get) if beyond else cap
                gain = beyond[t_x] / edge.gstencils if beyond else 1.0
                why = next((o.reason for o in ref if o.kernel_refused), "") or ""
                curve = measured.get((st.name, offsets, unit, dtype), {})
                m_best = max(curve, key=curve.get) if curve else None
                bests[(st.name, dtype)][unit] = best.gstencils
                rows.append({"stencil": st.name, "unit": unit, "dtype": dtype, "precision": precision, "cap": cap,
                             "refined_best_t": best.fuse, "refined_at_cap": round(edge.gstencils, 1),
                             "roof_at_cap": round(roof[cap], 1), "estimate_t": t_x,
                             "estimate": round(beyond.get(t_x, edge.gstencils), 1), "estimated_gain": round(gain, 3),
                             "measured_best_t": m_best if m_best is not None else "",
                             "measured_depths": ",".join(map(str, sorted(curve))),
                             "measured_at_edge": bool(curve) and m_best == cap,
                             "candidate": bool(curve) and m_best == cap and best.fuse == cap and gain > GAIN,
                             "limit": limit_kind(why), "refusal": why.split(": ", 1)[-1][:160]})
    for r in rows:  # would the estimate beyond the edge beat the other units' best within their reach?
        others = {u: g for u, g in bests[(r["stencil"], r["dtype"])].items() if u != r["unit"]}
        top = max(others, key=others.get) if others else ""
        r["best_other"] = f"{top} {others[top]:.0f}" if top else ""
        r["would_win"] = bool(top) and r["estimate"] > others[top] and r["refined_at_cap"] <= others[top]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "deeper-fusion.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    cands = [r for r in rows if r["candidate"]]
    at_edge = [r for r in rows if r["refined_best_t"] == r["cap"]]
    lines = ["# Deeper fusion: where the kernels' capacity stops it, and what the model says it would gain", "",
             f"Written by `benchmarks/deeper_fusion.py` (no GPU) with `{args.spec}` and "
             f"`{os.path.relpath(args.corpus, ROOT)}`.  {len(rows)} (stencil, unit, dtype) configurations stop at a "
             f"depth the kernel cannot pass (not at the search's t = 16); in {len(at_edge)} the refined model's best "
             f"depth is that edge, and in {len(cands)} the corpus measured its best there too with an estimated gain "
             f"beyond it above {int(100 * (GAIN - 1))} % (the edge's efficiency held along the roofline: an upper "
             "estimate).", "",
             "Best other: the refined model's best of the other units within their reach; would win: the estimate beats "
             "it where the edge does not (deeper fusion would change the answer).", "",
             "| stencil | unit | dtype | deepest runnable t | refined there | estimate beyond (t) | gain | best other | "
             "would win | measured best t (depths recorded) | what stops it |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(cands, key=lambda r: -r["estimated_gain"]):
        lines.append(f"| {r['stencil']} | {r['unit']} | {r['dtype']} | {r['cap']} | {r['refined_at_cap']} | "
                     f"{r['estimate']} (t = {r['estimate_t']}) | {r['estimated_gain']:.2f}x | {r['best_other']} | "
                     f"{'yes' if r['would_win'] else 'no'} | {r['measured_best_t']} ({r['measured_depths']}) | "
                     f"{r['refusal']} |")
    by_unit = defaultdict(lambda: [0, 0, 0])
    for r in rows:
        by_unit[r["unit"]][0] += 1
        by_unit[r["unit"]][1] += r["refined_best_t"] == r["cap"]
        by_unit[r["unit"]][2] += r["candidate"]
    wins = defaultdict(int)
    for r in cands:
        wins[r["unit"]] += r["would_win"]
    kinds = defaultdict(lambda: [0, 0, 0])
    for r in rows:
        kinds[r["limit"]][0] += 1
        kinds[r["limit"]][1] += r["candidate"]
        kinds[r["limit"]][2] += r["candidate"] and r["would_win"]
    lines += ["", "| what stops the kernel | configurations | candidates | of which would change the answer |",
              "|---|---|---|---|"]
    lines += [f"| {k} | {a} | {b} | {c} |" for k, (a, b, c) in sorted(kinds.items())]
    lines += ["", "| unit | stopped by capacity | refined best at the edge | candidates | of which would change the "
              "answer |", "|---|---|---|---|---|"]
    lines += [f"| {u} | {a} | {b} | {c} | {wins[u]} |" for u, (a, b, c) in sorted(by_unit.items())]
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
