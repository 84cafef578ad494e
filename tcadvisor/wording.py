"""The advisor's sentences: the deciding inequality of each comparison, and the verdict.

Kept apart from the numbers (:mod:`tcadvisor.advisor`) so that what is said can be
read and changed in one place.  The deciding inequality of a comparison is stated
once, in :func:`decision_text`; the verdict refers to it without repeating it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .advisor import Advice, Option


def depth_range(depths: list[int]) -> str:
    """``1..16``, ``1..16 and 20``, ``1..8, 10 and 12`` — a set of depths, compactly."""
    depths = sorted(depths)
    if not depths:
        return "none"
    runs, start, prev = [], depths[0], depths[0]
    for d in depths[1:]:
        if d != prev + 1:
            runs.append((start, prev))
            start = d
        prev = d
    runs.append((start, prev))
    texts = [str(a) if a == b else f"{a}..{b}" for a, b in runs]
    return texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " and " + texts[-1]


def decision_text(opt: "Option") -> str:
    """The inequality that decides this Tensor Core option against CUDA cores, with numbers."""
    v = opt.values
    i_cc, r_cc, i_tc, r_tc, R = v["I_cc"], v["rho_cc"], v["I_tc"], v["rho_tc"], v["R"]
    if opt.scenario == 1:
        return (f"scenario 1: memory-bound on both (I_CC = {i_cc:.3g} < ρ_cc = {r_cc:.3g}, "
                f"I_TC = {i_tc:.4g} < ρ_tc = {r_tc:.4g}), so R = 1: bandwidth caps both units")
    if opt.scenario == 2:
        return (f"scenario 2: memory-bound on CUDA cores (I_CC = {i_cc:.3g} < ρ_cc = {r_cc:.3g}) but "
                f"compute-bound on {opt.label} (I_TC = {i_tc:.4g} ≥ ρ_tc = {r_tc:.4g}), "
                f"so R = (α/β)·P_tc/(B·I_CC) = {R:.3g} ≤ 1: {opt.label} lose")
    if opt.scenario == 3:
        return (f"scenario 3: compute-bound on CUDA cores (I_CC = {i_cc:.3g} ≥ ρ_cc = {r_cc:.3g}) and "
                f"memory-bound on {opt.label} (I_TC = {i_tc:.4g} < ρ_tc = {r_tc:.4g}), "
                f"so R = B·I_CC/P_cc = {R:.3g} ≥ 1: {opt.label} win")
    thr = v["beta_threshold"]
    beta = float(opt.beta)
    if beta < thr:
        verdict = f"β = {beta:.3g} < α·P_tc/P_cc = {thr:.4g}, so {opt.label} win (R = {R:.3g})"
    elif beta > thr:
        verdict = f"β = {beta:.3g} > α·P_tc/P_cc = {thr:.4g}, so {opt.label} lose (R = {R:.3g})"
    else:
        verdict = f"β = α·P_tc/P_cc = {thr:.4g}, so both units tie (R = 1)"
    return f"scenario 4: compute-bound on both, {verdict}"


def name(opt: "Option") -> str:
    how = "temporal fusion" if opt.unit == "cuda_core" else "kernel fusion"
    inst = f" {opt.mma_shape}" if opt.mma_shape is not None else ""
    return f"{opt.label} ({opt.impl.name}, {how}, {opt.precision.upper()}{inst})"


def _tie_note(adv: "Advice", among: list["Option"], winner: "Option") -> str:
    from .advisor import TIE_TOLERANCE

    other = adv.runner_up(among, winner)
    if other is None or other.gstencils < winner.gstencils * (1 - TIE_TOLERANCE):
        return ""
    return (f" {other.label} at t = {other.fuse} come within {TIE_TOLERANCE:.0%} ({other.gstencils:.4g} GStencils/s): "
            "a tie within the model's resolution, so the simpler unit is named.")


def verdict_sentence(adv: "Advice") -> str:
    """The recommendation, the requested depth's outcome first if a depth was asked for."""
    from .advisor import TIE_TOLERANCE

    if adv.verdict is None:
        reasons = "; ".join(f"{o.label}: {o.reason}" for o in adv.options if o.reason)
        return f"No execution unit can run this configuration on this GPU ({reasons})."
    best = adv.verdict
    parts = []
    if adv.fuse is not None and adv.at_fuse is not None:
        here = adv.at_fuse
        parts.append(f"At t = {adv.fuse}, use {name(here)}: {here.gstencils:.4g} GStencils/s, {here.bound}-bound.")
        others = [f"{o.label} reach {o.speedup:.3g}x of CUDA cores (scenario {o.scenario}, inequality above)"
                  for o in adv.options if o.is_tensor and o.available and o.speedup is not None]
        if others:
            parts.append("; ".join(others) + ".")
        parts.append(_tie_note(adv, adv.options, here).strip())
    cc_best = adv.best.get("cuda_core")
    gain = ""
    if cc_best is not None and cc_best.available and best.unit != "cuda_core":
        gain = f", {best.gstencils / cc_best.gstencils:.3g}x the best CUDA-core configuration (t = {cc_best.fuse})"
    parts.append(
        f"Best over t = {depth_range(adv.searched)}: {name(best)} at t = {best.fuse}, "
        f"{best.gstencils:.4g} GStencils/s ({best.bound}-bound{gain})."
    )
    everything = [o for o in adv.best.values() if o.available]
    parts.append(_tie_note(adv, everything, best).strip())
    parts.append(f"Depths within {TIE_TOLERANCE:.0%} of the best count as equal and the shallowest is named.")
    if adv.skipped:
        parts.append(f"Not searched: t = {depth_range(sorted(adv.skipped))} "
                     f"({next(iter(adv.skipped.values()))}).")
    return " ".join(p for p in parts if p)
