"""Refit the refined model on the recorded corpora and judge it where it was not fitted: one command.

    PYTHONPATH=. python benchmarks/fit_refined.py [--no-write]

Reads the corpora (CORPORA below: every configuration checked and timed with today's kernels,
benchmarks/record_corpus.py), then through tcadvisor.validate.fitting:

* leave-one-shape-out per GPU, the headline: for each shape (dimensions, pattern, radius), the
  constants are fitted on the GPU's other shapes and predict this one's runs (all units, dtypes,
  depths and grids);
* leave-one-GPU-out: fitted on one GPU's corpus, predicting the other's;
* the 80 % intervals per unit and precision from the leave-one-shape-out residuals, and their coverage
  checked across GPUs (intervals from the H100's residuals on the H200's held-out predictions, and back);
* the identifiability of each constant (validation/results/refined-fit-2026-11-27/crossval.md);
* the shipped constants: fitted on both corpora, written to models/fitted/refined-terms.yaml with the
  kernel fingerprint (tcadvisor.fingerprint) they were fitted for and the intervals.

Writes models/fitted/refined-terms.yaml and validation/results/refined-fit-2026-11-27/ (crossval.md,
crossval.json, predictions.csv), and stamps each corpus.json with the kernel fingerprint when its
runs are provably today's kernels (stamp_corpus: the same sources, or the same CUDA sources and the same
launches).
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))  # same_preprocessed, beside this script

from tcadvisor import model, refinement  # noqa: E402
from tcadvisor.fingerprint import fingerprint_parts, kernel_fingerprint  # noqa: E402
from tcadvisor.hardware import resolve_gpu  # noqa: E402
from tcadvisor.validate import fitting as F  # noqa: E402

#: GPU label -> (corpus folder, spec its model inputs come from: the project's calibrated ceilings of that GPU)
CORPORA = {"H100": ("validation/results/h100-sxm-2026-11-27/corpus", "h100-calibrated"),
           "H200": ("validation/results/h200-2026-11-27/corpus", "h200-calibrated")}
#: A corpus's design recorded a second time on another machine of the same session, same kernels: run-to-run
#: noise.  The H200's of 2026-11-27 (stages): two recordings of the stages' first build (corpus-first, corpus-repeat;
#: the same kernels in both), before the register path was put back as it was (corpus/, the one fitted).
REPEAT = ("validation/results/h200-2026-11-27/corpus-first", "validation/results/h200-2026-11-27/corpus-repeat")
REPEAT_GPU = "H200"
OUT = ROOT / "validation/results/refined-fit-2026-11-27"
#: Kernel sources whose recorded hash must equal today's for a corpus to be stamped with today's fingerprint.
KERNEL_SOURCES = ("kernels/", "tcadvisor/gpu/plans.py")
#: Covered modules (not the planner's) changed since a corpus was recorded without changing any launch it holds,
#: by review: logical path -> (the file's fingerprint part it was reviewed at, why).  The part pins an entry to
#: that version of the file: any later change of it voids the entry.  Read by the "preprocessed" check only.
LAUNCH_NEUTRAL = {
    "tcadvisor/gpu/cuda_cores.py": (
        "b267b3e35931c7650e5ca9e5d8b96f0e286f6a6b48ca183cd5cd92f13bc5b1d8",
        "describe() names the iterations of input rows in flight where there are more than one (K_PF > 1), "
        "which no run recorded before it used"),
    "tcadvisor/gpu/tensor_cores.py": (
        "ebedfade275af273b762c72cde6fab05c201353424aa98d11e7d6c870d0a603e",
        "the kernel class passes ``stages`` to the planner and describe() names the stages in shared memory "
        "(K_STAGES), which no run recorded before it used; its refusal beyond a block's shared memory names them; "
        "sweep() refuses a staged kernel on a field whose row or slice pitch is not whole 16-byte chunks, which no "
        "recorded run had (every recorded field's pitch is a multiple of 32 elements)"),
}


def pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _raw_hash(rel: str) -> str | None:
    path = ROOT / rel
    return hashlib.sha256(path.read_bytes().replace(b"\r\n", b"\n")).hexdigest() if path.exists() else None


def stamp_corpus(folder: Path) -> str:
    """Write today's kernel fingerprint into a corpus header when the runs it holds are provably today's kernels.

    Two checks vouch for that, and the header's ``kernel_fingerprint_note`` says which one did:

    * *sources*: the CUDA sources and launch plans hashed at recording (``source_sha256``: kernels/ and
      tcadvisor/gpu/plans.py) are byte-identical to today's; a Python module of tcadvisor/gpu/ that changed
      since (a CPU-side helper) is listed in the note;
    * *launches*: the CUDA sources (kernels/*.cu, *.cuh) are byte-identical, every other covered file but the
      planner's (:data:`tcadvisor.validate.corpus.PLANNER_FILES`) has the fingerprint part recorded with the
      corpus, and every recorded run's launch, read from the kernel's own description in corpus.csv, is today's
      default plan (:func:`tcadvisor.validate.corpus.launches_changed`): the planner changed, what it launches
      did not (e.g. its measured defaults moved into kernels/defaults.yaml);
    * *preprocessed*, for a GPU that cannot be lent to record its corpus again: a CUDA source changed, the
      recorded version of every changed source is in git (benchmarks/same_preprocessed.py), and every other
      covered file but the planner's has its recorded part or is :data:`LAUNCH_NEUTRAL` at its reviewed part.  Runs
      whose launch is no longer today's default plan, and runs whose launch preprocesses to other tokens today than
      it compiled when recorded (today's kernel there is other code), are then *superseded*: listed in the header
      (``superseded_runs``), kept in corpus.csv as recorded, and read as not run by
      :func:`tcadvisor.validate.corpus.load_corpus`.

    A header already carrying today's fingerprint is left as it is; the fingerprint a header is re-stamped from
    is kept as ``kernel_fingerprint_recorded``."""
    from tcadvisor.validate.corpus import PLANNER_FILES, load_corpus, superseded_keys

    head_path = folder / "corpus.json"
    head = json.loads(head_path.read_text())
    today, parts = kernel_fingerprint(), fingerprint_parts()
    if head.get("kernel_fingerprint") == today:
        return f"{folder}: carries today's fingerprint {today}"
    recorded = head.get("source_sha256", {})
    changed = [rel for rel, digest in recorded.items() if _raw_hash(rel) != digest]
    if not [c for c in changed if c.startswith(KERNEL_SOURCES)]:
        check = "sources"
        note = ("the CUDA sources and launch plans hashed at recording are today's"
                + (f"; changed since, CPU-side Python only: {', '.join(changed)}" if changed else ""))
    else:
        cuda = [rel for rel in changed if rel.startswith("kernels/") and rel.endswith((".cu", ".cuh"))]
        then_parts = head.get("kernel_fingerprint_parts")
        if not isinstance(then_parts, dict):
            return f"{folder}: not stamped, kernel sources changed and no kernel_fingerprint_parts to compare"
        # as recorded: runs an earlier stamp superseded are judged again against today's default plans
        rows = [dict(r, status="ok") if r["status"] == "superseded" else r for r in load_corpus(folder)[1]]
        superseded: list[str] = superseded_keys(rows)
        neutral = []
        if cuda:
            from same_preprocessed import compare as compare_tokens
            from tcadvisor.validate.corpus import run_key

            why, recompiled, found = compare_tokens(rows, recorded)
            if why is not None:
                return f"{folder}: not stamped, CUDA sources changed since it was recorded ({why})"
            superseded += [k for k in map(run_key, recompiled) if k not in superseded]
            neutral = [p for p, (part, _) in LAUNCH_NEUTRAL.items()
                       if parts.get(p) == part and then_parts.get(p) != part]
        # a CUDA header added since (in no recorded source_sha256) is judged by the token comparison too: it
        # inlines today's headers, so a launch that includes one preprocesses to other tokens
        added_cuda = [p for p in parts if p.startswith("kernels/") and p.endswith(".cuh") and p not in recorded]
        others = [p for p in sorted(set(parts) | set(then_parts))
                  if p not in PLANNER_FILES and p not in neutral and parts.get(p) != then_parts.get(p)
                  and not (cuda and (p in cuda or p in added_cuda))]
        if others:
            return f"{folder}: not stamped, changed since it was recorded beside the planner: {', '.join(others)}"
        moved = [k for k in superseded if k not in head.get("superseded_runs", ())]
        if moved and not cuda:  # only a stamp of the preprocessed check supersedes runs; this one keeps them so
            return (f"{folder}: not stamped, {len(moved)} recorded launches are not today's default plans "
                    f"(e.g. {moved[0]}): record it again")
        planner = [p for p in PLANNER_FILES if parts.get(p) != then_parts.get(p)]
        if cuda:
            check = "preprocessed"
            note = (f"{found}; every other covered file but the planner's has its recorded fingerprint part"
                    + "".join(f"; {p} changed, by review launch-neutral: {LAUNCH_NEUTRAL[p][1]}" for p in neutral)
                    + f"; changed since: {', '.join(planner) or 'nothing else'}; "
                    + (f"{len(superseded)} recorded runs whose launch is no longer today's default plan or "
                       "compiles to other tokens today are superseded (superseded_runs: not read as run)"
                       if superseded else "every recorded launch is today's default plan"))
        else:
            check = "launches"
            note = (f"the CUDA sources are byte-identical to those recorded, every covered file but the planner's has "
                    f"its recorded fingerprint part, and all {len(rows) - len(superseded)} recorded runs' launches "
                    "but those superseded before (from the kernel's own description in corpus.csv) are today's "
                    "default plans: compile-time constants, shared memory and block "
                    f"(tcadvisor.validate.corpus.launches_changed); changed since: {', '.join(planner)}")
    head.setdefault("kernel_fingerprint_recorded", head.get("kernel_fingerprint"))
    head.pop("superseded_runs", None)
    if superseded:
        head["superseded_runs"] = superseded
    head["kernel_fingerprint"] = today
    head["kernel_fingerprint_parts"] = parts
    head["kernel_fingerprint_note"] = f"stamped by benchmarks/fit_refined.py ({check} check): {note}"
    head_path.write_text(json.dumps(head, indent=1, sort_keys=True) + "\n")
    return f"{folder}: stamped {today} (the {check} check)"


def repeat_noise(runs: list | None = None) -> dict:
    """Run-to-run spread: the same configurations timed in two recordings on one GPU with the same kernels
    (:data:`REPEAT`; ``runs`` is not used)."""
    from tcadvisor.validate.corpus import load_corpus

    def ok(folder):
        return {(r["stencil"], r["offsets"], r["unit"], r["dtype"], r["fuse"], r["grid"]): float(r["gstencils"])
                for r in load_corpus(ROOT / folder)[1] if r["status"] == "ok"}

    first, second = ok(REPEAT[0]), ok(REPEAT[1])
    ratios = [second[k] / first[k] for k in first if k in second]
    dev = np.abs(np.log(ratios))
    return {"pairs": len(ratios), "median_abs": float(np.exp(np.median(dev)) - 1),
            "p90_abs": float(np.exp(np.quantile(dev, 0.9)) - 1)}


def table(rep: dict) -> list[str]:
    lines = ["| unit / precision | runs | median | 90th pct | worst | within 15 % |", "|---|---|---|---|---|---|"]
    for key, s in [*rep["by_unit"].items(), ("all", rep["all"])]:
        lines.append(f"| {key} | {s['runs']} | {pct(s['median'])} | {pct(s['p90'])} | {pct(s['worst'])} | "
                     f"{pct(s['within_15'])} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    if not args.no_write:  # first: a corpus stamped by the preprocessed check is read without its superseded runs
        for folder in dict.fromkeys([folder for folder, _ in CORPORA.values()] + list(REPEAT)):
            print(stamp_corpus(ROOT / folder))
    runs = {g: F.load_runs(ROOT / folder, resolve_gpu(spec).spec, g) for g, (folder, spec) in CORPORA.items()}
    everything = [r for rs in runs.values() for r in rs]
    results: dict = {"pinned": {k: {"value": v, "why": w} for k, (v, w) in F.PINNED.items()}}
    preds: dict = {}
    for g, rs in runs.items():
        loso = F.leave_one_out(rs, lambda r: r.shape)
        own = F.predict(rs, F.fit(rs))
        other = next(x for x in runs if x != g)
        logo = F.predict(rs, F.fit(runs[other]))
        preds[g] = {"loso": loso, "in_sample": own, "logo": logo}
        results[g] = {"leave_one_shape_out": F.report(loso, rs), "leave_one_gpu_out": F.report(logo, rs),
                      "in_sample": F.report(own, rs), "shapes": len({r.shape for r in rs})}
        a = results[g]["leave_one_shape_out"]
        print(f"{g}: leave-one-shape-out median {pct(a['all']['median'])}, p90 {pct(a['all']['p90'])}, worst "
              f"{pct(a['all']['worst'])}; winners {a['winners']}; best depth {a['best_depth']}")
    # intervals: per GPU from its own LOSO residuals; coverage checked on the other GPU's LOSO predictions
    for g, rs in runs.items():
        other = next(x for x in runs if x != g)
        table_g = F.intervals(preds[g]["loso"], rs)
        results[g]["interval_coverage_on_" + other] = F.coverage(preds[other]["loso"], runs[other], table_g)
        # the other GPU's verdicts with the intervals this GPU's residuals give: right, flagged, or wrong unflagged
        results[other]["verdicts_with_intervals"] = F.flagged_winners(preds[other]["loso"], runs[other], table_g)
    shipped_intervals = F.intervals(np.concatenate([preds[g]["loso"] for g in runs]), everything)
    results["coverage_in_sample_pooled"] = F.coverage(np.concatenate([preds[g]["loso"] for g in runs]), everything,
                                                      shipped_intervals)
    shipped = F.fit(everything)
    results["shipped"] = {s.name: v for s, v in shipped.items()}
    results["identifiability"] = {g: F.identifiability(rs) for g, rs in runs.items()}
    results["repeat_noise"] = {**repeat_noise(), "gpu": REPEAT_GPU}
    for g in runs:
        print(f"{g} verdicts with the other GPU's intervals: {results[g]['verdicts_with_intervals']}")
        print(f"{g}: 80 % intervals from its residuals cover "
              f"{pct(results[g]['interval_coverage_on_' + next(x for x in runs if x != g)])} of the other GPU's")
    print("shipped constants:", ", ".join(f"{k} = {v:.5g}" for k, v in results["shipped"].items()))
    print(f"repeat noise ({REPEAT_GPU}):", results["repeat_noise"])
    if args.no_write:
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    write_predictions(runs, preds, shipped)
    (OUT / "crossval.json").write_text(json.dumps(results, indent=1, default=float) + "\n")
    (OUT / "crossval.md").write_text(markdown(results, shipped_intervals))
    write_constants(shipped, shipped_intervals, results, {g: len(rs) for g, rs in runs.items()})
    return 0


def write_predictions(runs: dict, preds: dict, shipped: dict) -> None:
    with (OUT / "predictions.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["gpu", "shape", "stencil", "unit", "dtype", "precision", "fuse", "grid", "measured",
                    "shipped", "leave_one_shape_out", "leave_one_gpu_out", "in_sample_this_gpu"])
        for g, rs in runs.items():
            ship = F.predict(rs, shipped)
            for i, r in enumerate(rs):
                w.writerow([g, r.shape, r.row["stencil"], r.unit, r.row["dtype"], r.precision, r.fuse, r.row["grid"],
                            f"{r.measured:.2f}", f"{ship[i]:.2f}", f"{preds[g]['loso'][i]:.2f}",
                            f"{preds[g]['logo'][i]:.2f}", f"{preds[g]['in_sample'][i]:.2f}"])


def markdown(res: dict, intervals: dict) -> str:
    gpus = [g for g in CORPORA]
    lines = ["# The refined model, judged where it was not fitted (2026-11-27 corpora)", "",
             "Written by `benchmarks/fit_refined.py` (do not edit). Corpora: "
             + "; ".join(f"{g} `{CORPORA[g][0]}` ({res[g]['in_sample']['all']['runs']} runs, "
                         f"{res[g]['shapes']} shapes)" for g in gpus)
             + ". Error: predicted / measured − 1, absolute. Winners: configurations run on several units whose "
               f"measured leader is ahead by more than {pct(F.TIE_BAND)}. Best depth: curves (stencil × dtype × unit "
               f"× grid, at least two depths) whose predicted best depth measured within {pct(F.BEST_DEPTH_BAND)} of "
               "the measured best.", ""]
    for g in gpus:
        for name, key in (("leave-one-shape-out (headline)", "leave_one_shape_out"),
                          ("leave-one-GPU-out (fitted on the other GPU)", "leave_one_gpu_out"),
                          ("in sample (fitted on this GPU's whole corpus)", "in_sample")):
            rep = res[g][key]
            lines += [f"## {g}: {name}", "", *table(rep), "",
                      f"Winner named in {rep['winners'][0]} of {rep['winners'][1]} clear cases "
                      f"({pct(rep['winners'][0] / max(rep['winners'][1], 1))}); best depth within "
                      f"{pct(F.BEST_DEPTH_BAND)} in {rep['best_depth'][0]} of {rep['best_depth'][1]} curves "
                      f"({pct(rep['best_depth'][0] / max(rep['best_depth'][1], 1))}). Worst: {rep['all']['worst_run']}.",
                      ""]
        v = res[g]["verdicts_with_intervals"]
        lines += [f"With the 80 % intervals (from the other GPU's held-out residuals), the {g}'s clear cases: the "
                  f"verdict right in {v['right']} ({v['right_but_flagged']} of them said too close to call all the same), wrong but said too close to call (intervals overlap) in {v['flagged']}, wrong "
                  f"without saying so in {v['confidently_wrong']}"
                  + (": " + "; ".join(v["confidently_wrong_cases"]) if v["confidently_wrong_cases"] else "") + ".", ""]
        rep = res[g]["leave_one_shape_out"]
        lines += [f"### {g}: leave-one-shape-out winner misses", "", *[f"* {x}" for x in rep["winner_misses"]], "",
                  f"### {g}: leave-one-shape-out best-depth misses", "",
                  *[f"* {x}" for x in rep["best_depth_misses"]], ""]
    other = {gpus[0]: gpus[1], gpus[1]: gpus[0]}
    lines += ["## Intervals", "",
              "80 % intervals of measured / predicted per unit and precision, from the leave-one-shape-out "
              "residuals of both GPUs (what `advise` prints). Coverage, held out: "
              + "; ".join(f"intervals from the {g} residuals contain {pct(res[g]['interval_coverage_on_' + other[g]])}"
                          f" of the {other[g]} held-out measurements" for g in gpus) + ".", "",
              "| unit / precision | low | high | runs |", "|---|---|---|---|"]
    lines += [f"| {k} | {v['low']:.3f} | {v['high']:.3f} | {v['n']} |" for k, v in intervals.items()]
    lines += ["", "## Identifiability", "",
              "Robust loss when a constant is removed (0), divided by ten or multiplied by ten, every other constant "
              "refitted, relative to the fit with all free (blank: outside the constant's bounds). A constant "
              f"whose removal costs less than {pct(F.IDENTIFIABLE)} is not identified by the data and is pinned.", "",
              "| GPU | constant | fitted | removed | tenth | tenfold |", "|---|---|---|---|---|---|"]
    for g in gpus:
        for row in res["identifiability"][g]:
            cells = [f"+{pct(row[k])}" if row[k] is not None else "" for k in ("removed", "tenth", "tenfold")]
            lines.append(f"| {g} | {row['constant']} | {row['fitted']:.4g} | " + " | ".join(cells) + " |")
    lines += ["", "Pinned: " + "; ".join(f"{k} = {v['value']} ({v['why']})" for k, v in res["pinned"].items()), "",
              f"Run-to-run noise (the same {res['repeat_noise']['pairs']} {res['repeat_noise']['gpu']} configurations "
              f"in two recordings): median {pct(res['repeat_noise']['median_abs'])}, 90th percentile "
              f"{pct(res['repeat_noise']['p90_abs'])}.", ""]
    return "\n".join(lines)


def write_constants(shipped: dict, intervals: dict, res: dict, counts: dict) -> None:
    gpus = list(CORPORA)
    doc = {
        "kernel_fingerprint": kernel_fingerprint(),
        "trained_on": {g: f"{CORPORA[g][0]} ({counts[g]} runs)" for g in gpus},
        "loss": f"least squares of log(predicted/measured GStencils/s), {F.LOSS}, f_scale {F.F_SCALE}",
        "constants": {s.name: {"value": float(f"{shipped[s]:.5g}"), "unit": F.UNITS_OF[s.name],
                               "meaning": model.SYMBOLS[s],
                               **({"pinned": F.PINNED[s.name][1]} if s.name in F.PINNED else {})}
                      for s in model.FITTED},
        "intervals": {k: {**v, "source": "leave-one-shape-out residuals, H100 and H200 corpora 2026-11-27"}
                      for k, v in intervals.items()},
        "held_out": {g: {k: {"median": round(res[g][k]["all"]["median"], 4), "p90": round(res[g][k]["all"]["p90"], 4),
                             "worst": round(res[g][k]["all"]["worst"], 4), "winners": res[g][k]["winners"],
                             "best_depth": res[g][k]["best_depth"]}
                         for k in ("leave_one_shape_out", "leave_one_gpu_out")} for g in gpus},
        "report": "validation/results/refined-fit-2026-11-27/crossval.md",
        "kernel_fingerprint_parts": fingerprint_parts(),
    }
    header = ("# The refined model's fitted constants (docs/model.md, \"Fitted constants\").\n"
              "# Written by benchmarks/fit_refined.py; the model reads 'constants' and 'intervals'.  A CPU test\n"
              "# fails when the kernels' fingerprint differs from kernel_fingerprint: refit after a kernel change.\n")
    path = ROOT.joinpath(*refinement.CONSTANTS_FILE)
    path.write_text(header + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=110))


if __name__ == "__main__":
    sys.exit(main())
