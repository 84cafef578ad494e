"""The measured kernel defaults (kernels/defaults.yaml) give the plans they gave as constants of plans.py.

``tests/data/plans-golden.json`` holds, for every corpus stencil x bundled kernel x precision x depth 1-16
(x every MMA instruction the dense profile lists for the precision; 1D CUDA cores also with
``layout="stream"``), the default plan's defines, shared memory, block, tiles, registers and options, or the
planner's refusal.  It was written by ``python tests/test_plan_defaults.py --write`` at commit 6d451f6, before
the measured defaults moved out of ``tcadvisor/gpu/plans.py``; a plan that differs from it by one define is a
kernel that runs differently, which a data move must not make.  Regenerate it only for a change meant to change
the plans (and then refit: ``python benchmarks/fit_refined.py``).
"""
from __future__ import annotations

import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "data", "plans-golden.json")
MAX_FUSE = 16


def _plan_record(plan) -> dict:
    return {"defines": ";".join(f"{k}={v}" for k, v in plan.defines), "smem": plan.smem, "block": list(plan.block),
            "threads": plan.threads, "tile": plan.tile, "outputs": plan.outputs, "halo": plan.halo,
            "fill": plan.fill, "live_words": plan.live_words, "mma": str(plan.mma) if plan.mma else None,
            "mma_per_slice": plan.mma_per_slice,
            "options": {k: (v if isinstance(v, (bool, int, float, str)) or v is None else str(v))
                        for k, v in sorted(plan.options.items())}}


def current_plans() -> dict[str, dict]:
    """Configuration key -> the default plan's record (or ``{"error": ...}``), for every configuration above."""
    from tcadvisor.errors import TcAdvisorError
    from tcadvisor.gpu import plans, registry
    from tcadvisor.gpu.tensor_cores import SHAPES
    from tcadvisor.impls import find_impl
    from tcadvisor.mma import MmaShape
    from tcadvisor.validate.corpus import PROFILES, corpus_stencils

    out: dict[str, dict] = {}
    for st in corpus_stencils():
        for unit, name in PROFILES.items():
            prof = find_impl(name)
            for dtype in prof.precisions:
                precision = registry.precision(prof, dtype)
                if prof.kernel == "cuda_cores":
                    variants = [("", {})] + ([("stream", {"layout": "stream"})] if st.dims == 1 else [])
                    build = lambda t, kw: plans.plan_cuda_cores(st, t, precision, **kw)  # noqa: E731
                elif prof.kernel == "tensor_cores":
                    variants = [(str(s), {"shape": MmaShape.parse(str(s))}) for s in prof.mma.get(precision, ())
                                if str(s) in SHAPES[precision]]
                    build = lambda t, kw: plans.plan_tensor_cores(st, t, precision, kw["shape"])  # noqa: E731
                else:
                    variants = [("", {})]
                    build = lambda t, kw: plans.plan_sparse_tensor_cores(st, t, precision)  # noqa: E731
                for label, kw in variants:
                    for t in range(1, MAX_FUSE + 1):
                        key = "|".join(filter(None, (st.name, prof.kernel, precision, label, f"t{t}")))
                        if key in out:
                            continue
                        try:
                            out[key] = _plan_record(build(t, kw))
                        except TcAdvisorError as exc:
                            out[key] = {"error": str(exc)}
    return out


def test_the_default_plans_are_the_golden_ones():
    with open(GOLDEN) as f:
        golden = json.load(f)["plans"]
    now = current_plans()
    assert sorted(now) == sorted(golden)
    differ = [k for k in golden if json.loads(json.dumps(now[k])) != golden[k]]
    assert not differ, (len(differ), differ[:5], [(golden[k], now[k]) for k in differ[:2]])


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/test_plan_defaults.py --write  (rewrites tests/data/plans-golden.json)")
    sys.path.insert(0, ROOT)
    records = current_plans()
    note = ("the default plan of every corpus stencil x kernel x precision x depth 1-16 (x MMA instruction; 1D CUDA "
            "cores also layout='stream'), or the planner's refusal; written by python tests/test_plan_defaults.py "
            "--write (see its docstring for when)")
    with open(GOLDEN, "w") as f:  # one configuration a line, so that a diff names the plans that moved
        f.write('{"note": %s,\n"plans": {\n' % json.dumps(note))
        f.write(",\n".join(f"{json.dumps(k)}: {json.dumps(records[k], sort_keys=True, separators=(',', ':'))}"
                           for k in sorted(records)))
        f.write("\n}}\n")
    print(f"{len(records)} configurations -> {GOLDEN}")
