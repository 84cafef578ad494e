"""Experiment (not adopted): a per-slice wait in the Tensor Core latency term, judged leave-one-shape-out.

    PYTHONPATH=. python benchmarks/experiment_slice_term.py zero|inv|ni|rows

c_lat_tc = (lambda_0 + lambda_1*k + lambda_s*X)/W with X = 0 (the shipped model), 1/m_s, n_i/m_s or n_s*n_i/m_s
(m_s: MMAs per warp tile and slice; n_s*n_i: kernel lines, the input rows a slice loads).  Results:
validation/results/refined-fit-2026-11-25/experiment-slice-term.txt.

It ran against the model of its day: the term it extends divided λ_0 by g_I, a symbol the model dropped on
2026-12-02 when the latency term began counting the instructions per MMA (benchmarks/experiment_tc_instructions.py
judges that term).  Rerun it at the commit that added it (2653bf6).
"""
import numpy as np, sympy as sp, sys
from pathlib import Path
from tcadvisor import model, refinement
from tcadvisor.hardware import resolve_gpu
from tcadvisor.validate import fitting as F
from tcadvisor.impls import find_impl
from tcadvisor.mma import MmaShape
M=model
lam_s=sp.Symbol("lambda_s",positive=True); X=sp.Symbol("X_s",positive=True)
mode=sys.argv[1]
chain=list(M.TERM_CHAINS["tensor_core"])
steps=[]
for eq in chain:
    short=eq.short
    if eq.symbol==M.c_lat_tc:
        short=(M.lambda_0+M.lambda_1*M.k_I+lam_s*X)/(M.W_sm*M.g_I)
    steps.append((eq.symbol, short, eq.unit, eq.meaning, eq.group))
M.TERM_CHAINS["tensor_core"]=M._term_chain(steps)
M.term_function.cache_clear()
M.FITTED=M.FITTED+(lam_s,)
F.START["lambda_s"]=10.0; F.BOUNDS["lambda_s"]=(0,5000); F.UNITS_OF["lambda_s"]="cycles"
def feat(r):
    row=r.row
    if r.chain!="tensor_core": return 0.0
    impl=find_impl(F.PROFILES[r.unit]); mma=MmaShape.parse(row["mma"]) if row["mma"] else None
    ctx=refinement.Context(impl,impl.tiling,r.unit,r.stencil,r.fuse,row["dtype"],r.precision,mma,None)
    plan=refinement.recorded_plan(ctx,row["kernel"])
    ms=plan.mma_per_slice; ns=plan.options["ns"]; ni=plan.options["ni"]
    if mode=="inv": return 1.0/ms
    if mode=="rows": return ns*ni/ms
    if mode=="ni": return ni/ms
    if mode=="zero": return 0.0
for g,folder,sp_ in (("H100","validation/results/h100-sxm-2026-11-25/corpus-b","h100-calibrated"),("H200","validation/results/h200-2026-11-25/corpus","h200-calibrated")):
    runs=F.load_runs(Path(folder), resolve_gpu(sp_).spec, g)
    for r in runs: r.inputs[X]=feat(r)
    pred=F.leave_one_out(runs, lambda r: r.shape)
    rep=F.report(pred, runs); a=rep["all"]; bu=rep["by_unit"]
    f=F.fit(runs)
    print(mode, g, f"med {a['median']:.3f} p90 {a['p90']:.3f} w15 {a['within_15']:.2f} win {rep['winners']} bd {rep['best_depth']} | " + " ".join(f"{k.split('/')[0][:6]}/{k.split('/')[1]} {v['median']:.2f}/{v['p90']:.2f}" for k,v in bu.items() if 'tensor' in k), f"lambda_s={f[lam_s]:.3g}")
