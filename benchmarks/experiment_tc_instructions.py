"""The Tensor Core kernels' latency term with the instructions a warp issues per MMA counted from its plan, against
the term of before (a constant wait per MMA), judged leave-one-shape-out on both corpora with every constant
refitted per held-out shape (session 50, 2026-12-02; the counted term is the shipped one since).

Before: c_lat_tc = (λ_0/g_I + λ_1·k)/W, λ_0 a constant wait per MMA for the stream of other instructions, divided by
g_I, the lines one weight-fragment read serves.  Nsight Compute puts that stream at 13-40 instructions per MMA
(validation/results/h100-sxm-2026-11-25/instructions/), and at 24 on the staged Box-1D3R FP16 x16, whose issue
slots were 72 % busy (validation/results/h200-2026-12-02/tc-1d-stages/run/).  Now: c_lat_tc = (λ_0·n_im + λ_1·k)/W,
n_im the instructions per MMA the plan counts (tcadvisor.gpu.plans.LaunchPlan.instructions_per_mma).  Also judged:
an issue ceiling n_im/4 cycles per MMA beside the pipes (it never binds: the counted instructions leave the
addresses and loop control out), and, as exploration only (each a number chosen, not counted or fitted), the
counted loads doubled for their addresses and a fixed 64 or 128 instructions per slice.

    PYTHONPATH=. python benchmarks/experiment_tc_instructions.py > validation/results/refined-fit-2026-11-27/experiment-tc-instructions.txt
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import sympy as sp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from q_b_experiment import CORPORA  # noqa: E402
from tcadvisor import model  # noqa: E402
from tcadvisor.hardware import resolve_gpu  # noqa: E402
from tcadvisor.validate import fitting as F  # noqa: E402

g_I = sp.Symbol("g_I", positive=True)


def lines_per_warp(run) -> float:
    """g_I of the term of before: the lines one weight-fragment read serves (the plan's ``ir``)."""
    from q_b_experiment import plan_options

    return plan_options(run).get("ir", 1)


def mmas_per_slice(run) -> float:
    from q_b_experiment import plan_options

    o = plan_options(run)
    if "ka" in o:
        return o.get("ir", 1) * o["rows"] * o["ka"]
    return o["rows"] * o["kch"] * o.get("ir", 1)


def use_chain(latency: str, issue: bool) -> None:
    """The Tensor Core chain with c_lat_tc of ``latency`` ("counted" or "constant") and an issue ceiling."""
    steps = []
    for eq in ORIGINAL:
        short = eq.short
        if eq.name == "c_lat_tc" and latency == "constant":
            short = (model.lambda_0 / g_I + model.lambda_1 * model.k_I) / model.W_sm
        if eq.name == "eta_tc" and issue:
            short = model.c_mma / (sp.Max(model.c_mma, model.c_op, model.n_im / 4) + model.c_lat_tc)
        steps.append((eq.symbol, short, eq.unit, eq.meaning, eq.group))
    model.TERM_CHAINS["tensor_core"] = model._term_chain(steps)
    model.term_function.cache_clear()


def judge(label: str, adjust=None) -> None:
    for gpu, folder, spec in CORPORA:
        runs = F.load_runs(ROOT / folder, resolve_gpu(spec).spec, gpu)
        for r in runs:
            if r.chain == "tensor_core":
                r.inputs[g_I] = lines_per_warp(r)
                if adjust:
                    r.inputs[model.n_im] = adjust(r)
        pred = F.leave_one_out(runs, lambda r: r.shape)
        rep = F.report(pred, runs)
        a = rep["all"]
        err = pred / np.array([r.measured for r in runs]) - 1
        tc = [i for i, r in enumerate(runs) if r.chain == "tensor_core"]
        deep1d = [i for i in tc if runs[i].stencil.dims == 1 and runs[i].stencil.radius * runs[i].fuse >= 32]
        tc3d = [i for i in tc if runs[i].stencil.dims == 3]
        print(f"{label} {gpu}: median {100 * a['median']:.1f} %, p90 {100 * a['p90']:.1f} %, worst "
              f"{100 * a['worst']:.0f} %, winners {rep['winners'][0]}/{rep['winners'][1]}, best depth "
              f"{rep['best_depth'][0]}/{rep['best_depth'][1]}; Tensor Cores median {100 * np.median(abs(err[tc])):.1f} %"
              f", 3D {100 * np.median(err[tc3d]):+.1f} % signed, 1D r·t >= 32 {100 * np.median(err[deep1d]):+.1f} %"
              f" signed", flush=True)


ORIGINAL = model.TERM_CHAINS["tensor_core"]


def main() -> int:
    for label, latency, issue in (("constant per MMA (before)", "constant", False), ("counted (shipped)", "counted", False),
                                  ("counted + issue ceiling", "counted", True)):
        use_chain(latency, issue)
        judge(label)
    use_chain("counted", False)
    for label, addr, per_slice in (("exploration: loads doubled", 1, 0), ("exploration: 64 per slice", 0, 64),
                                   ("exploration: 128 per slice", 0, 128)):
        judge(label, lambda r, a=addr, o=per_slice: 1 + (r.inputs[model.n_im] - 1) * (1 + a) + o / mmas_per_slice(r))
    model.TERM_CHAINS["tensor_core"] = ORIGINAL
    model.term_function.cache_clear()
    return 0


if __name__ == "__main__":
    sys.exit(main())
