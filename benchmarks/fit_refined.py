"""Fit the refined model's constants on one GPU's validation runs and report them on another's.

The refined model (docs/model.md, "The refined variant") derives every term from
the bundled kernels' launch plans except seven constants: latencies and an
achievable bandwidth fraction that no datasheet gives.  This script fits them,
by robust least squares on log(predicted / measured GStencils/s), to the
validation runs of the training GPU, and reports both models on the held-out
GPU's runs (and the reverse split):

* train on the H100 (validation/results/h100-sxm-2026-11-23), hold out the H200
  (validation/results/h200-2026-11-23): a different memory system (4.26 vs 2.99
  TB/s) with the same SMs, so the held-out error tests how memory and compute
  combine; the constants it writes are the ones tcadvisor uses;
* the reverse split, reported beside.

Every prediction goes through tcadvisor's own code: the plans
(tcadvisor.gpu.plans), the term chain (tcadvisor.model.TERM_CHAINS) and the
model chain (tcadvisor.model.evaluate); the CSVs are written through
tcadvisor.validate.compare.predict, the path ``advise --model refined`` takes,
and checked against the vectorised evaluation the fit uses.

Writes models/fitted/refined-terms.yaml (the constants the model reads) and, in
each results directory, refined.csv (measured, base and refined side by side)
and refined-summary.md.  Run from the repository root:

    PYTHONPATH=. python benchmarks/fit_refined.py
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import yaml
from scipy.optimize import least_squares

from tcadvisor import model, refinement
from tcadvisor.hardware_schema import load_spec_file
from tcadvisor.impls import find_impl
from tcadvisor.mma import MmaShape
from tcadvisor.stencil import parse_stencil
from tcadvisor.validate.compare import predict as predict_option
from tcadvisor.validate.records import load_results

ROOT = Path(__file__).resolve().parent.parent
RESULTS = {"H100": ROOT / "validation/results/h100-sxm-2026-11-23", "H200": ROOT / "validation/results/h200-2026-11-23"}
TRAIN = "H100"
PROFILES = {"cuda_core": "tcadvisor-cc", "tensor_core": "tcadvisor-tc", "sparse_tensor_core": "tcadvisor-sptc"}
#: Start and bounds of the fit (units: cycles, cycles, cycles, cycles, cycles, fraction, seconds).
START = {"lambda_c": 1.0, "o_c": 8.0, "L_it": 1000.0, "lambda_0": 10.0, "lambda_1": 2.0, "eta_B0": 0.9,
         "L_mem": 5e-7}
BOUNDS = {"lambda_c": (0, 100), "o_c": (0, 100), "L_it": (0, 2e4), "lambda_0": (0, 500), "lambda_1": (0, 50),
          "eta_B0": (0.3, 1.2), "L_mem": (0, 5e-6)}
UNITS_OF = {"lambda_c": "cycles per instruction and 32-bit word", "o_c": "instructions per point update",
            "L_it": "cycles per iteration", "lambda_0": "cycles per MMA", "lambda_1": "cycles per MMA and unit of k",
            "eta_B0": "fraction of the copy bandwidth", "L_mem": "seconds"}
#: Robust loss: residuals beyond about 10 % weigh linearly, so one odd run cannot pull every constant.
LOSS, F_SCALE = "soft_l1", 0.1
TIE_BAND = 0.10  # the validation suites' tie band between units
BEST_DEPTH_BAND = 0.03  # a predicted best depth within 3 % of the measured best's throughput counts as agreeing


@dataclass
class Run:
    m: object  # tcadvisor.validate.records.Measurement
    gpu: str
    spec: object
    stencil: object
    chain: str  # cuda_core | tensor_core
    inputs: dict
    grid3: tuple[int, int, int]
    mma: MmaShape | None

    @property
    def key(self) -> tuple:
        return (self.m.suite, self.m.case, self.m.stencil, self.m.dtype, self.m.fuse, self.m.unit)


def grid3(text: str, dims: int) -> tuple[int, int, int]:
    extents = tuple(int(v) for v in text.replace("×", "x").split("x"))
    return (1,) * (3 - dims) + extents


def load_runs(gpu: str) -> list[Run]:
    folder = RESULTS[gpu]
    spec = load_spec_file(folder / "calibrated.yaml")
    runs = []
    for m in load_results(folder / "results.json").measurements:
        if not m.ok:
            continue
        stencil = parse_stencil(m.stencil)
        impl = find_impl(PROFILES[m.unit])
        mma = MmaShape.parse(m.mma) if m.mma else None
        grid = grid3(m.grid, stencil.dims)
        ctx = refinement.Context(impl, impl.tiling, m.unit, stencil, m.fuse, m.dtype, m.precision, mma, spec, grid)
        inputs, *_ = refinement.plan_inputs(ctx, plan=refinement.recorded_plan(ctx, m.kernel))
        chain = "cuda_core" if m.unit == "cuda_core" else "tensor_core"
        runs.append(Run(m, gpu, spec, stencil, chain, inputs, grid, mma))
    return runs


def load_bench_runs() -> list[Run]:
    """The H100 kernel benchmark (kernels/kernels.csv: more stencils and depths, timings only), minus the
    configurations the validation suites ran: stencils and depths the fit never saw, on the training GPU."""
    from types import SimpleNamespace

    folder = RESULTS[TRAIN]
    spec = load_spec_file(folder / "calibrated.yaml")
    seen = {(r.m.stencil, r.m.dtype, r.m.fuse, r.m.unit) for r in load_runs(TRAIN)}
    runs, done = [], set()
    with (folder / "kernels" / "kernels.csv").open() as f:
        for row in csv.DictReader(f):
            key = (row["stencil"], row["dtype"], int(row["fuse"]), row["unit"])
            if row["impl"] != PROFILES.get(row["unit"]) or row["correct"] != "True" or key in seen or key in done:
                continue
            done.add(key)
            stencil = parse_stencil(row["stencil"])
            alpha = Fraction(float(row["alpha"])).limit_denominator(4096) if row["alpha"] else None
            m = SimpleNamespace(suite="kernel-benchmark", case="", stencil=row["stencil"], dtype=row["dtype"],
                                fuse=int(row["fuse"]), unit=row["unit"], precision=row["precision"],
                                mma=row["mma"] or None, alpha_exact=str(alpha) if alpha else None,
                                gstencils=float(row["gstencils"]), grid=row["grid"], kernel=row["kernel"],
                                meas_intensity=None, meas_bytes_per_point=None, meas_flops_per_point=None)
            impl = find_impl(PROFILES[m.unit])
            mma = MmaShape.parse(m.mma) if m.mma else None
            grid = grid3(m.grid, stencil.dims)
            ctx = refinement.Context(impl, impl.tiling, m.unit, stencil, m.fuse, m.dtype, m.precision, mma, spec, grid)
            inputs, *_ = refinement.plan_inputs(ctx, plan=refinement.recorded_plan(ctx, m.kernel))
            runs.append(Run(m, TRAIN, spec, stencil, "cuda_core" if m.unit == "cuda_core" else "tensor_core",
                            inputs, grid, mma))
    return runs


# --------------------------------------------------------------------------- the model, vectorised over runs


def predict(runs: list[Run], fitted: dict, omega: float = 1.0) -> np.ndarray:
    """Refined GStencils/s of every run at the fitted constants ``fitted`` (symbol -> value).

    ``omega``: the overlap of memory and compute phases (the model's ω, 1 as shipped); other
    values serve :func:`omega_scan`.
    """
    out = np.empty(len(runs))
    for chain in ("cuda_core", "tensor_core"):
        idx = [i for i, r in enumerate(runs) if r.chain == chain]
        if not idx:
            continue
        values = {**{s: np.array([runs[i].inputs[s] for i in idx], dtype=float)
                     for s in runs[idx[0]].inputs}, **fitted}
        terms = {}
        for term in refinement.unit_terms(runs[idx[0]].m.unit):
            if term.hook in ("overlap", "depth_limit"):
                continue  # 1 and the kernel's limit (every recorded run ran)
            fn, args = model.term_function(chain, term.name)
            terms[term.name] = fn(*(values[a] for a in args))
        terms["omega_cc" if chain == "cuda_core" else "omega_tc"] = omega
        ms = [runs[i].m for i in idx]
        alpha = np.array([float(Fraction(m.alpha_exact)) if m.alpha_exact else 1.0 for m in ms])
        beta = np.array([float(runs[i].stencil.beta(runs[i].m.fuse)) for i in idx])
        peak = values[model.P_cc] if chain == "cuda_core" else values[model.P_tc]
        got = model.evaluate(K=np.array([runs[i].stencil.K for i in idx], dtype=float),
                             t=np.array([m.fuse for m in ms], dtype=float),
                             beta=beta if chain != "cuda_core" else 1.0, alpha=alpha if chain != "cuda_core" else 1.0,
                             S=values[model.S], B=values[model.B], P_cc=peak, P_tc=peak, variant="refined", **terms)
        out[idx] = got["gstencils_cc" if chain == "cuda_core" else "gstencils_tc"]
    return out


def fit(runs: list[Run], omega: float = 1.0) -> tuple[dict, dict]:
    names = [s.name for s in model.FITTED]
    measured = np.array([r.m.gstencils for r in runs])
    scale = np.array([START[n] for n in names])

    def residuals(x):
        fitted = dict(zip(model.FITTED, x * scale))
        return np.log(predict(runs, fitted, omega) / measured)

    lo = np.array([BOUNDS[n][0] for n in names]) / scale
    hi = np.array([BOUNDS[n][1] for n in names]) / scale
    res = least_squares(residuals, np.ones(len(names)), bounds=(lo, hi), loss=LOSS, f_scale=F_SCALE)
    # five significant digits: what the YAML keeps, so every number reported is the shipped model's
    fitted = {s: float(f"{v:.5g}") for s, v in zip(model.FITTED, res.x * scale)}
    return fitted, {"cost": float(res.cost), "evaluations": int(res.nfev), "status": res.message}


def omega_scan(train: list[Run], test: list[Run]) -> list[dict]:
    """The evidence for ω = 1: refit every constant at a fixed overlap ω and compare the errors."""
    out = []
    for omega in (1.0, 0.8, 0.6, 0.4, 0.2, 0.0):
        fitted, _ = fit(train, omega)
        e_train = np.abs(errors(predict(train, fitted, omega), train))
        e_test = np.abs(errors(predict(test, fitted, omega), test))
        out.append({"omega": omega, "train_median": float(np.median(e_train)),
                    "held_out_median": float(np.median(e_test)), "held_out_worst": float(e_test.max())})
    return out


# --------------------------------------------------------------------------- how good


def errors(pred: np.ndarray, runs: list[Run]) -> np.ndarray:
    """measured / predicted − 1, the validation report's convention (negative: below the prediction)."""
    return np.array([r.m.gstencils / p - 1 for p, r in zip(pred, runs)])


def best_depth(pred: np.ndarray, runs: list[Run]) -> tuple[int, int, list[str]]:
    """Depth-sweep stencil x dtype x unit groups whose predicted best depth agrees with the measured one."""
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(runs):
        if r.m.suite in ("depth-sweep", "kernel-benchmark"):
            groups.setdefault((r.m.stencil, r.m.dtype, r.m.unit), []).append(i)
    ok, lines = 0, []
    for key, idx in sorted(groups.items()):
        if len(idx) < 2:
            continue
        meas_best = max(idx, key=lambda i: runs[i].m.gstencils)
        pred_best = max(idx, key=lambda i: pred[i])
        good = (runs[pred_best].m.fuse == runs[meas_best].m.fuse
                or runs[pred_best].m.gstencils >= (1 - BEST_DEPTH_BAND) * runs[meas_best].m.gstencils)
        ok += good
        lines.append(f"{' '.join(key)}: predicted t = {runs[pred_best].m.fuse}, measured best t = "
                     f"{runs[meas_best].m.fuse} ({'agrees' if good else 'misses'}; the predicted depth measured "
                     f"{runs[pred_best].m.gstencils / runs[meas_best].m.gstencils:.1%} of the best)")
    return ok, sum(1 for idx in groups.values() if len(idx) >= 2), lines


def winners(pred: np.ndarray, runs: list[Run]) -> tuple[int, int, list[str]]:
    """Configurations run on several units whose measured winner leads by more than the tie band."""
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(runs):
        groups.setdefault((r.m.suite, r.m.case, r.m.stencil, r.m.dtype, r.m.fuse), []).append(i)
    ok = n = 0
    misses = []
    for key, idx in sorted(groups.items()):
        if len(idx) < 2:
            continue
        by_meas = sorted(idx, key=lambda i: -runs[i].m.gstencils)
        if runs[by_meas[1]].m.gstencils >= (1 - TIE_BAND) * runs[by_meas[0]].m.gstencils:
            continue  # a tie: outside the question
        n += 1
        pred_win = max(idx, key=lambda i: pred[i])
        if pred_win == by_meas[0]:
            ok += 1
        else:
            misses.append(f"{key[2]} {key[3]} t = {key[4]}: measured {runs[by_meas[0]].m.unit}, predicted "
                          f"{runs[pred_win].m.unit}")
    return ok, n, misses


def summary(pred: np.ndarray, runs: list[Run]) -> dict:
    e = np.abs(errors(pred, runs))
    bd = best_depth(pred, runs)
    w = winners(pred, runs)
    return {"runs": len(runs), "median": float(np.median(e)), "worst": float(e.max()),
            "worst_run": " ".join(map(str, runs[int(e.argmax())].key[2:])),
            "within_15": float(np.mean(e <= 0.15)), "within_35": float(np.mean(e <= 0.35)),
            "best_depth": [bd[0], bd[1]], "best_depth_lines": bd[2], "winners": [w[0], w[1]], "winner_misses": w[2]}


# --------------------------------------------------------------------------- outputs


def option_for(run: Run, variant: str):
    m = run.m
    alpha = Fraction(m.alpha_exact) if m.alpha_exact else None
    return predict_option(run.stencil, m.dtype, m.unit, m.fuse, run.spec, alpha, find_impl(PROFILES[m.unit]),
                          run.mma, model=variant, grid=run.grid3)


CSV_FIELDS = ["suite", "case", "stencil", "dtype", "fuse", "unit", "precision", "mma", "grid",
              "meas_gstencils", "base_gstencils", "refined_gstencils", "refined_heldout_gstencils",
              "err_base", "err_refined", "err_refined_heldout",
              "meas_intensity", "base_intensity", "refined_intensity",
              "meas_bytes_per_point", "refined_bytes_per_point", "meas_flops_per_point", "refined_flops_per_point",
              "refined_bound", "h_or_k", "eta", "eta_B", "warps_per_sm", "blocks_per_sm", "registers_estimated",
              "registers_compiled"]


def write_csv(path: Path, runs: list[Run], base, refined, heldout) -> None:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        w.writeheader()
        for r, b, o, h in zip(runs, base, refined, heldout):
            m = r.m
            terms = o.terms
            key = "h_cc" if m.unit == "cuda_core" else "k_tc"
            suffix = "cc" if m.unit == "cuda_core" else "tc"
            regs = m.kernel.rsplit(",", 1)[-1].strip().split(" ")[0] if m.kernel else ""
            w.writerow({
                "suite": m.suite, "case": m.case, "stencil": m.stencil, "dtype": m.dtype, "fuse": m.fuse,
                "unit": m.unit, "precision": m.precision, "mma": m.mma or "", "grid": m.grid,
                "meas_gstencils": f"{m.gstencils:.2f}", "base_gstencils": f"{b.gstencils:.2f}",
                "refined_gstencils": f"{o.gstencils:.2f}", "refined_heldout_gstencils": f"{h.gstencils:.2f}",
                "err_base": f"{m.gstencils / b.gstencils - 1:+.4f}", "err_refined": f"{m.gstencils / o.gstencils - 1:+.4f}",
                "err_refined_heldout": f"{m.gstencils / h.gstencils - 1:+.4f}",
                "meas_intensity": f"{m.meas_intensity:.4g}" if m.meas_intensity else "",
                "base_intensity": f"{b.intensity:.4g}", "refined_intensity": f"{o.intensity:.4g}",
                "meas_bytes_per_point": f"{m.meas_bytes_per_point:.4g}" if m.meas_bytes_per_point else "",
                "refined_bytes_per_point": f"{o.bytes_per_point:.4g}",
                "meas_flops_per_point": f"{m.meas_flops_per_point:.4g}" if m.meas_flops_per_point else "",
                "refined_flops_per_point": f"{o.flops_per_point:.4g}", "refined_bound": o.bound,
                "h_or_k": f"{terms[key]:.4f}", "eta": f"{terms['eta_' + suffix]:.4f}",
                "eta_B": f"{terms['eta_B_' + suffix]:.4f}", "warps_per_sm": int(o.term_inputs[model.W_sm]),
                "blocks_per_sm": int(o.term_inputs[model.N_b]),
                "registers_estimated": refinement.plan_for(PROFILES[m.unit] and find_impl(PROFILES[m.unit]).kernel,
                                                           r.stencil, m.fuse, m.precision, r.mma).registers,
                "registers_compiled": regs,
            })


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def markdown(title: str, other: str, own: str | None, s_base: dict, s_held: dict, s_own: dict | None) -> str:
    """The summary of one set of runs: the paper's model, the refined one held out, and (for a suite's GPU) fitted
    on its own runs; the row of the constants tcadvisor ships is marked."""
    def mark(gpu):
        return " (shipped)" if gpu == TRAIN else ""

    lines = [f"# Refined and base model against the {title}", "",
             "Written by `benchmarks/fit_refined.py` (do not edit); `refined.csv` has every run side by side "
             "(`refined_gstencils`: the shipped constants, fitted on the "
             f"{TRAIN} runs; `refined_heldout_gstencils`: constants fitted on the {other} runs). Error: measured / "
             "predicted − 1, absolute. Best depth: the predicted best depth is the measured best or within 3 % of "
             "its throughput. Winners: configurations whose measured best unit leads the next by more than the "
             "10 % tie band.", "",
             "| model | runs | median abs. error | worst abs. error (run) | within 15% | within 35% | best depth | winners |",
             "|---|---|---|---|---|---|---|---|"]
    rows = [("base (the paper's)", s_base), (f"refined, fitted on the {other} runs: held out{mark(other)}", s_held)]
    if s_own is not None:
        rows.append((f"refined, fitted on these runs: in-sample{mark(own)}", s_own))
    for name, s in rows:
        lines.append(f"| {name} | {s['runs']} | {pct(s['median'])} | {pct(s['worst'])} ({s['worst_run']}) | "
                     f"{pct(s['within_15'])} | {pct(s['within_35'])} | {s['best_depth'][0]}/{s['best_depth'][1]} | "
                     f"{s['winners'][0]}/{s['winners'][1]} |")
    if s_held["best_depth_lines"]:
        lines += ["", "Best depth per stencil, dtype and unit (refined, held out):", ""]
        lines += [f"* {x}" for x in s_held["best_depth_lines"]]
    if s_held["winner_misses"]:
        lines += ["", "Winner misses outside the tie band (refined, held out):", ""]
        lines += [f"* {x}" for x in s_held["winner_misses"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="fit and report, write nothing")
    parser.add_argument("--verbose", action="store_true", help="print the best-depth lines and the largest errors")
    args = parser.parse_args(argv)
    runs = {gpu: load_runs(gpu) for gpu in RESULTS}
    fitted, info = {}, {}
    for gpu in RESULTS:
        fitted[gpu], info[gpu] = fit(runs[gpu])
        print(f"fitted on {gpu}: " + ", ".join(f"{s.name} = {v:.4g}" for s, v in fitted[gpu].items()))
    report = {}
    held = next(g for g in RESULTS if g != TRAIN)
    report["omega_scan"] = omega_scan(runs[TRAIN], runs[held])
    print("overlap ω refitted:", ", ".join(f"ω = {o['omega']}: held-out median {pct(o['held_out_median'])}"
                                           for o in report["omega_scan"]))
    for gpu in RESULTS:
        other = next(g for g in RESULTS if g != gpu)
        rs = runs[gpu]
        base = [option_for(r, "base") for r in rs]
        with refinement.using_constants(fitted[TRAIN]):
            refined = [option_for(r, "refined") for r in rs]
        with refinement.using_constants(fitted[other]):
            heldout = [option_for(r, "refined") for r in rs]
        with refinement.using_constants(fitted[gpu]):
            own = [option_for(r, "refined") for r in rs]
        # the CSV path (advise's) and the fit's vectorised path are one model
        vec = predict(rs, fitted[TRAIN])
        path = np.array([o.gstencils for o in refined])
        assert np.allclose(vec, path, rtol=1e-9), np.max(np.abs(vec / path - 1))
        s_base = summary(np.array([o.gstencils for o in base]), rs)
        s_ref = summary(path, rs)
        s_held = summary(np.array([o.gstencils for o in heldout]), rs)
        s_own = summary(np.array([o.gstencils for o in own]), rs)
        report[gpu] = {"base": s_base, "refined": s_ref, "refined_heldout": s_held, "refined_in_sample": s_own}
        print(f"{gpu}: base median {pct(s_base['median'])} worst {pct(s_base['worst'])}; refined (held out, constants "
              f"from {other}) median {pct(s_held['median'])} worst {pct(s_held['worst'])} ({s_held['worst_run']}), "
              f"best depth {s_held['best_depth']}, winners {s_held['winners']}")
        if args.verbose:
            print("\n".join("  " + x for x in s_held["best_depth_lines"] + s_held["winner_misses"]))
            e = errors(np.array([o.gstencils for o in heldout]), rs)
            for i in np.argsort(-np.abs(e))[:12]:
                print(f"  {e[i]:+.3f}  {' '.join(map(str, rs[i].key[2:]))}")
        if not args.no_write:
            write_csv(RESULTS[gpu] / "refined.csv", rs, base, refined, heldout)
            (RESULTS[gpu] / "refined-summary.md").write_text(markdown(f"{gpu} runs", other, gpu, s_base, s_held,
                                                                      s_own))
    bench = load_bench_runs()
    if bench:
        base = [option_for(r, "base") for r in bench]
        with refinement.using_constants(fitted[TRAIN]):  # the constants about to be shipped, not the file's old ones
            refined = [option_for(r, "refined") for r in bench]
        with refinement.using_constants(fitted[next(g for g in RESULTS if g != TRAIN)]):
            heldout = [option_for(r, "refined") for r in bench]
        s_base, s_ref, s_held = (summary(np.array([o.gstencils for o in opts]), bench)
                                 for opts in (base, refined, heldout))
        report["kernel-benchmark"] = {"base": s_base, "refined": s_ref, "refined_heldout": s_held}
        print(f"kernel benchmark ({len(bench)} runs of stencils and depths outside the suites, {TRAIN}): base median "
              f"{pct(s_base['median'])}; refined median {pct(s_ref['median'])} worst {pct(s_ref['worst'])} "
              f"({s_ref['worst_run']})")
        if not args.no_write:
            folder = RESULTS[TRAIN] / "kernels"
            write_csv(folder / "refined.csv", bench, base, refined, heldout)
            (folder / "refined-summary.md").write_text(markdown(
                f"{TRAIN} kernel benchmark: stencils and depths outside the validation suites, timings only",
                next(g for g in RESULTS if g != TRAIN), None, s_base, s_held, None)
                + f"\nWith the shipped constants (fitted on the {TRAIN} validation runs, the same GPU): median "
                  f"{pct(s_ref['median'])}, worst {pct(s_ref['worst'])} ({s_ref['worst_run']}), within 35 %: "
                  f"{pct(s_ref['within_35'])}.\n")
    if not args.no_write:
        write_constants(fitted, info, report)
    return 0


def write_constants(fitted: dict, info: dict, report: dict) -> None:
    held = next(g for g in RESULTS if g != TRAIN)
    rel = {g: str(p.relative_to(ROOT)) for g, p in RESULTS.items()}
    doc = {
        "trained_on": f"{rel[TRAIN]} ({len(report[TRAIN]['base']['best_depth_lines']) and report[TRAIN]['base']['runs']} runs)",
        "held_out": f"{rel[held]} ({report[held]['base']['runs']} runs)",
        "loss": f"least squares of log(predicted/measured GStencils/s), {LOSS}, f_scale {F_SCALE}",
        "constants": {s.name: {"value": float(f"{v:.5g}"), "unit": UNITS_OF[s.name], "meaning": model.SYMBOLS[s]}
                      for s, v in fitted[TRAIN].items()},
        "reverse_split": {"trained_on": rel[held],
                          "constants": {s.name: float(f"{v:.5g}") for s, v in fitted[held].items()}},
        "held_out_errors": {
            g: {k: {"median": round(report[g][k]["median"], 4), "worst": round(report[g][k]["worst"], 4),
                    "best_depth": report[g][k]["best_depth"], "winners": report[g][k]["winners"]}
                for k in ("base", "refined_heldout")}
            for g in RESULTS},
        "overlap_scan": [{k: round(v, 4) for k, v in o.items()} for o in report["omega_scan"]],
    }
    header = ("# The refined model's fitted constants (docs/model.md, \"Fitted constants\").\n"
              "# Written by benchmarks/fit_refined.py; the model reads 'constants'.  held_out_errors: per GPU, the\n"
              "# base model and the refined model with constants fitted on the other GPU (a held-out prediction).\n")
    path = ROOT.joinpath(*refinement.CONSTANTS_FILE)
    path.write_text(header + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=110))
    (RESULTS[TRAIN].parent / "refined-fit.json").write_text(json.dumps(
        {"constants": {g: {s.name: v for s, v in f.items()} for g, f in fitted.items()}, "fit": info,
         "report": report}, indent=1, default=str) + "\n")


if __name__ == "__main__":
    sys.exit(main())
