"""The advisor's sentences: the deciding inequality of each comparison, and the verdict.

Kept apart from the numbers (:mod:`tcadvisor.advisor`) so that what is said can be
read and changed in one place.  The deciding inequality of a comparison is stated
once, in :func:`decision_text`; the verdict refers to it without repeating it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .search import TIE_TOLERANCE

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
    """The inequality that decides this Tensor Core option against CUDA cores, with numbers.

    Under the refined model the ridges and intensities carry the kernels' achievable
    ceilings and halo terms, so the paper's closed forms (R ≤ 1 in scenario 2, β against
    α·P_tc/P_cc in 4) no longer hold; the scenario is stated with R itself.
    """
    v = opt.values
    i_cc, r_cc, i_tc, r_tc, R = v["I_cc"], v["rho_cc"], v["I_tc"], v["rho_tc"], v["R"]
    if opt.model == "refined":
        cc_side = "memory" if i_cc < r_cc else "compute"
        tc_side = "memory" if i_tc < r_tc else "compute"
        rel = "<" if i_cc < r_cc else "≥"
        rel_tc = "<" if i_tc < r_tc else "≥"
        outcome = "win" if R > 1 else ("lose" if R < 1 else "tie")
        return (f"scenario {opt.scenario}: {cc_side}-bound on CUDA cores (I_CC = {i_cc:.3g} {rel} ρ_cc = {r_cc:.3g}), "
                f"{tc_side}-bound on {opt.label} (I_TC = {i_tc:.4g} {rel_tc} ρ_tc = {r_tc:.4g}), both kernels at "
                f"their achievable ceilings (refined), so R = P_TC/P_CC = {R:.3g}: {opt.label} {outcome}")
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


def gstencils_text(opt: "Option") -> str:
    """``412 GStencils/s`` with the prediction's interval where one is known: ``412 (350–470) GStencils/s``."""
    rng = opt.interval_range()
    if rng is None:
        return f"{opt.gstencils:.4g} GStencils/s"
    return f"{opt.gstencils:.4g} ({rng[0]:.4g}–{rng[1]:.4g}) GStencils/s"


def too_close(a: "Option", b: "Option") -> bool:
    """Whether the intervals of two refined predictions overlap (False where either has none)."""
    ra, rb = a.interval_range(), b.interval_range()
    return ra is not None and rb is not None and ra[0] <= rb[1] and rb[0] <= ra[1]


def _close_call(adv: "Advice", among: list["Option"], winner: "Option") -> str:
    """The sentence for a winner the model cannot tell from the runner-up, naming the command that settles it."""
    other = adv.runner_up(among, winner)
    if other is None or not too_close(winner, other):
        return ""
    level = min(winner.interval.level, other.interval.level)
    run = f"{adv.command} --run" if adv.command else "tcadvisor advise ... --run"
    return (f"Too close for the model to call: {winner.label} (t = {winner.fuse}, {gstencils_text(winner)}) and "
            f"{other.label} (t = {other.fuse}, {gstencils_text(other)}) overlap at the {level:.0%} level of measured "
            f"against predicted; '{run}' measures both on this GPU.")


def _models_differ(adv: "Advice", among: list["Option"], winner: "Option") -> str:
    """Said where the winner and the runner-up come from different models (a prediction against a bound)."""
    other = adv.runner_up(among, winner)
    if other is None or other.model == winner.model:
        return ""
    refined, base = (winner, other) if winner.model == "refined" else (other, winner)
    return (f"{refined.label} ({refined.impl.name}) is the refined model's prediction for a kernel that runs, "
            f"{base.label} ({base.impl.name}) the base model's bound: not like for like.")


def no_kernel_note(adv: "Advice", opt: "Option") -> str:
    """Under the base model, said next to a recommendation that no bundled kernel runs on this GPU.

    The paper's model has no depth limit and the published profiles run dtypes the bundled
    kernels do not (EBISU at t = 12 where the CUDA-core kernel's shared memory holds t = 7; a
    generic FP16 CUDA-core code); the answer stays the paper's and says so.  Nothing is said
    where the GPU runs no bundled kernel at all (its fallback line says that).
    """
    if opt.model != "base" or not opt.available:
        return ""
    from .gpu.registry import bundled_profile
    from .support import depth_refusal, gpu_refusal, kernel_precision

    profile = bundled_profile(opt.unit)
    precision, why = kernel_precision(profile, adv.dtype)
    if gpu_refusal(profile, adv.gpu, precision):
        return ""
    if why is None and not adv.gpu.has(opt.unit, precision):
        why = f"{adv.gpu.name} has no {precision.upper()} on its {opt.label}"
    if why is None:
        why = depth_refusal(profile, adv.stencil, opt.fuse, adv.dtype, precision, adv.gpu)
    if not why:
        return ""
    return f"No bundled kernel runs this here ({why if profile.name in why else f'{profile.name}: {why}'})."


def _tie_note(adv: "Advice", among: list["Option"], winner: "Option") -> str:
    other = adv.runner_up(among, winner)
    if other is None or other.gstencils < winner.gstencils * (1 - TIE_TOLERANCE):
        return ""
    return (f" {other.label} at t = {other.fuse} come within {TIE_TOLERANCE:.0%} ({other.gstencils:.4g} GStencils/s): "
            "a tie within the model's resolution, so the simpler unit is named.")


def verdict_sentence(adv: "Advice") -> str:
    """The recommendation, the requested depth's outcome first if a depth was asked for."""
    if adv.verdict is None:
        reasons = "; ".join(f"{o.label}: {o.reason}" for o in adv.options if o.reason)
        return f"No execution unit can run this configuration on this GPU ({reasons})."
    best = adv.verdict
    parts = []
    if adv.fuse is not None and adv.at_fuse is None:
        reasons = "; ".join(f"{o.label}: {o.reason}" for o in adv.options if o.reason)
        parts.append(f"At t = {adv.fuse}, no unit runs this configuration ({reasons}).")
    if adv.fuse is not None and adv.at_fuse is not None:
        here = adv.at_fuse
        parts.append(f"At t = {adv.fuse}, use {name(here)}: {gstencils_text(here)}, {here.bound}-bound.")
        parts.append(no_kernel_note(adv, here))
        others = [f"{o.label} reach {o.speedup:.3g}x of CUDA cores (scenario {o.scenario}, "
                  f"{'inequality' if o.model == 'base' else 'comparison'} above)"
                  for o in adv.options if o.is_tensor and o.available and o.speedup is not None]
        if others:
            parts.append("; ".join(others) + ".")
        parts.append(_tie_note(adv, adv.options, here).strip())
        parts.append(_close_call(adv, adv.options, here))
        parts.append(_models_differ(adv, adv.options, here))
    cc_best = adv.best.get("cuda_core")
    gain = ""
    if cc_best is not None and cc_best.available and best.unit != "cuda_core":
        gain = f", {best.gstencils / cc_best.gstencils:.3g}x the best CUDA-core configuration (t = {cc_best.fuse})"
    over = f"t = {depth_range(adv.searched)}"
    if adv.unit_skipped:
        over += ", the depths each bundled kernel runs"
    parts.append(f"Best over {over}: {name(best)} at t = {best.fuse}, {gstencils_text(best)} "
                 f"({best.bound}-bound{gain}).")
    parts.append(no_kernel_note(adv, best))
    everything = [o for o in adv.best.values() if o.available]
    parts.append(_tie_note(adv, everything, best).strip())
    parts.append(_close_call(adv, everything, best))
    parts.append(_models_differ(adv, everything, best))
    parts.append(f"Depths within {TIE_TOLERANCE:.0%} of the best count as equal and the shallowest is named.")
    if adv.skipped:
        parts.append(f"Not searched: t = {depth_range(sorted(adv.skipped))} "
                     f"({next(iter(adv.skipped.values()))}).")
    return " ".join(p for p in parts if p)
