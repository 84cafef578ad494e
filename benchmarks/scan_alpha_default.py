"""How many verdicts the α default changes: published constants (the old default) vs constructed α.

The scan of the issue on trustworthy answers: box and star stencils in 1D, 2D and 3D, radius 1..4,
fusion depth 1..8, double and float, on four GPUs.  For every configuration the advisor is asked
twice with the same code, once with ``alpha="paper"`` (each implementation's published constant,
the default before) and once with the default (α constructed for the fused stencil, instruction
and precision wherever the implementation has a construction).  A verdict is the unit recommended
at that depth; the script also compares each stencil's overall recommendation (unit and best depth
over t = 1..16).  In 1D a star is a box: those configurations are counted once.

    python benchmarks/scan_alpha_default.py --out validation/results/alpha-default-scan-<date>

Writes ``scan.csv`` (one row per configuration), ``per_impl.csv`` (each transformation in turn) and ``summary.md``
into --out and prints the summary.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcadvisor.advisor import advise, best_index  # noqa: E402
from tcadvisor.hardware import find_spec  # noqa: E402
from tcadvisor.impls import find_impl  # noqa: E402
from tcadvisor.stencil import Stencil  # noqa: E402

GPUS = ("a100", "h100", "h200", "b200")
DTYPES = ("double", "float")
FUSES = range(1, 9)


def stencils():
    seen = set()
    for shape in ("box", "star"):
        for dims in (1, 2, 3):
            for radius in (1, 2, 3, 4):
                s = getattr(Stencil, shape)(dims, radius)
                if s.name not in seen:
                    seen.add(s.name)
                    yield s


def pair_winner(adv, unit):
    """CUDA cores or ``unit``, whichever the advisor's rule picks between the two at the asked depth."""
    pair = [o for o in adv.options if o.unit in ("cuda_core", unit) and o.available]
    i = best_index([o.gstencils for o in pair], [o.fuse for o in pair], [o.unit for o in pair])
    return pair[i].unit if i is not None else ""


def tc(adv, unit):
    return next(o for o in adv.options if o.unit == unit)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows, overall = [], []
    for key in GPUS:
        gpu = find_spec(key)
        for dtype in DTYPES:
            for st in stencils():
                for t in FUSES:
                    old = advise(st, dtype, gpu, fuse=t, alpha="paper")
                    new = advise(st, dtype, gpu, fuse=t)
                    row = {"gpu": gpu.short, "dtype": dtype, "stencil": st.name, "fuse": t,
                           "old_unit": old.at_fuse.unit if old.at_fuse else "", "new_unit": new.at_fuse.unit if new.at_fuse else ""}
                    for unit, short in (("tensor_core", "tc"), ("sparse_tensor_core", "sptc")):
                        o, n = tc(old, unit), tc(new, unit)
                        row[f"{short}_alpha_paper"] = str(o.alpha) if o.available else ""
                        row[f"{short}_alpha_constructed"] = str(n.alpha) if n.available else ""
                        row[f"{short}_R_paper"] = f"{o.speedup:.4g}" if o.speedup is not None else ""
                        row[f"{short}_R_constructed"] = f"{n.speedup:.4g}" if n.speedup is not None else ""
                    row["changed"] = row["old_unit"] != row["new_unit"]
                    rows.append(row)
                old_b, new_b = advise(st, dtype, gpu, alpha="paper"), advise(st, dtype, gpu)
                overall.append((gpu.short, dtype, st.name, (old_b.verdict.unit, old_b.verdict.fuse),
                                (new_b.verdict.unit, new_b.verdict.fuse)))
    with open(os.path.join(args.out, "scan.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    changed = [r for r in rows if r["changed"]]
    flips = Counter((r["old_unit"], r["new_unit"]) for r in changed)
    by_gpu = Counter(r["gpu"] for r in changed)
    unit_changed = sum(1 for *_, o, n in overall if o[0] != n[0])
    any_changed = sum(1 for *_, o, n in overall if o != n)
    lines = [
        f"# α default scan ({datetime.date.today().isoformat()})", "",
        f"Configurations: {len(rows)} = {len({r['stencil'] for r in rows})} stencils (box and star, 1D-3D, r = 1..4; "
        f"a 1D star is a box) x t = 1..8 x double/float x {len(GPUS)} GPUs ({', '.join(GPUS)}).",
        "",
        f"Verdicts (unit recommended at that depth) that change from the published constants to constructed α: "
        f"**{len(changed)} of {len(rows)}**.", "",
        "| from | to | configurations |", "|---|---|---|",
    ] + [f"| {a} | {b} | {n} |" for (a, b), n in flips.most_common()] + [
        "", "By GPU: " + ", ".join(f"{g} {by_gpu.get(g, 0)}" for g in sorted({r['gpu'] for r in rows})) + ".", "",
        f"Overall recommendation per stencil, dtype and GPU (best unit and depth over t = 1..16): unit changes in "
        f"{unit_changed} of {len(overall)}, unit or depth in {any_changed} of {len(overall)}.",
    ]
    lines += ["", "## Per transformation", "",
              "Each Tensor Core implementation in turn for its unit, over the same stencils, depths and GPUs and "
              "every dtype among double, float and half it runs: the verdict between CUDA cores and that "
              "implementation at the asked depth, with its published constant vs its constructed α.", "",
              "| implementation | unit | dtypes | configurations | verdicts changed |", "|---|---|---|---|---|"]
    per_impl = []
    for name in ("ConvStencil", "LoRAStencil", "TCStencil", "SPIDER", "SparStencil"):
        impl = find_impl(name)
        dtypes = [d for d in ("double", "float", "half") if d in impl.precisions]
        n = changed_n = 0
        for key in GPUS:
            gpu = find_spec(key)
            for dtype in dtypes:
                for st in stencils():
                    if impl.unsupported(st):
                        continue
                    for t in FUSES:
                        old = advise(st, dtype, gpu, fuse=t, impls=[impl], alpha="paper")
                        new = advise(st, dtype, gpu, fuse=t, impls=[impl])
                        o, nn = tc(old, impl.unit), tc(new, impl.unit)
                        if not (o.available and nn.available):
                            continue
                        n += 1
                        a, b = pair_winner(old, impl.unit), pair_winner(new, impl.unit)
                        changed_n += a != b
                        per_impl.append({"impl": name, "gpu": gpu.short, "dtype": dtype, "stencil": st.name,
                                         "fuse": t, "alpha_paper": str(o.alpha), "alpha_constructed": str(nn.alpha),
                                         "old_unit": a, "new_unit": b})
        lines.append(f"| {name} | {impl.unit} | {', '.join(dtypes)} | {n} | {changed_n} |")
    with open(os.path.join(args.out, "per_impl.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(per_impl[0]))
        w.writeheader()
        w.writerows(per_impl)
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
