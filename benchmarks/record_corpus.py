"""Record the refined model's corpus on this GPU: a stratified design of bundled-kernel runs, checked and timed.

    python benchmarks/record_corpus.py --out DIR --gpu-spec h100-calibrated [--n 600] [--budget-s 480]

1. the design (tcadvisor.validate.corpus.design): every shape x unit x dtype curve that the
   kernels run on this GPU, a spread of depths along each, a few curves on other grids;
2. every kernel compiled ahead by ``--workers`` processes (NVRTC through CuPy, whose disk cache
   the timing process then hits), so the timing loop spends its time on the GPU;
3. each configuration checked on a small odd grid (two sweeps against the float64 reference,
   NaN-poisoned outputs), then timed on its grid (median of 5 repeats of 4 sweeps);
4. corpus.csv (one row per configuration, appended as each completes), corpus.json (device,
   date, measured copy bandwidth, design, the kernels' fingerprint (tcadvisor.fingerprint, what the fitted
   constants are checked against) and the sha256 of every file of kernels/ and tcadvisor/gpu/)
   and a summary table printed last.

The design is planned with the spec given (the GPU's SMs and shared memory decide which depths
run); the same design on two GPUs gives leave-one-GPU-out on identical configurations.
"""
from __future__ import annotations

import argparse
import collections
import datetime
import hashlib
import json
import multiprocessing as mp
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tcadvisor.fingerprint import fingerprint_parts, kernel_fingerprint  # noqa: E402
from tcadvisor.hardware import resolve_gpu  # noqa: E402
from tcadvisor.validate import corpus  # noqa: E402


def source_hashes() -> dict[str, str]:
    """sha256 of every file that decides what a bundled kernel runs: kernels/ and tcadvisor/gpu/."""
    files = sorted([*ROOT.joinpath("kernels").glob("*"), *ROOT.joinpath("tcadvisor", "gpu").glob("*.py")])
    return {str(p.relative_to(ROOT)): hashlib.sha256(p.read_bytes().replace(b"\r\n", b"\n")).hexdigest()
            for p in files if p.is_file()}


def _compile(cfg) -> tuple[str, float, str]:
    t0 = time.time()
    try:
        corpus.make_kernels(cfg)
        return cfg.stencil, time.time() - t0, ""
    except Exception as exc:  # noqa: BLE001 - reported, the timing loop records it again
        return cfg.stencil, time.time() - t0, f"{type(exc).__name__}: {exc}"[:200]


def precompile(configs, workers: int, budget_s: float) -> dict:
    """Compile every distinct kernel in ``workers`` processes (spawned: each makes its own CUDA context)."""
    seen, unique = set(), []
    for c in configs:
        key = (c.stencil, c.offsets, c.unit, c.dtype, c.fuse)
        if key not in seen:
            seen.add(key)
            unique.append(c)
    t0 = time.time()
    times, errors = [], 0
    ctx = mp.get_context("spawn")
    with ctx.Pool(workers) as pool:
        pending = pool.imap_unordered(_compile, unique)  # chunksize 1: an iterator with next(timeout)
        for _ in unique:
            remaining = budget_s - (time.time() - t0)
            if remaining <= 0:
                break
            try:
                _, dt, err = pending.next(timeout=remaining)
            except mp.TimeoutError:
                break
            times.append(dt)
            errors += bool(err)
        pool.terminate()
    return {"kernels": len(unique), "compiled": len(times), "errors": errors, "wall_s": round(time.time() - t0, 1),
            "median_compile_s": round(statistics.median(times), 2) if times else None}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--gpu-spec", required=True, help="spec the design is planned with (h100-calibrated, ...)")
    ap.add_argument("--n", type=int, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget-s", type=float, default=480, help="total wall time (compile and timing)")
    ap.add_argument("--workers", type=int, default=12)
    ap.add_argument("--sweeps", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    start = time.time()
    args.out.mkdir(parents=True, exist_ok=True)
    spec = resolve_gpu(args.gpu_spec).spec
    configs = corpus.design(spec, args.n, args.seed)
    print(f"design: {len(configs)} configurations on {spec.name}", flush=True)

    from benchmarks.gpu_session_kernels import measure_copy_bandwidth
    from tcadvisor.gpu.backend import cupy, device_info

    comp = precompile(configs, args.workers, budget_s=0.45 * args.budget_s)
    print(f"precompile: {comp}", flush=True)
    cp = cupy()
    bandwidth = measure_copy_bandwidth(cp)
    header = {"device": device_info()["name"], "date": datetime.date.today().isoformat(),
              "spec": args.gpu_spec, "copy_bandwidth": bandwidth, "design": {"n": args.n, "seed": args.seed},
              "configurations": len(configs), "precompile": comp, "sweeps": args.sweeps, "repeats": args.repeats,
              "kernel_fingerprint": kernel_fingerprint(), "kernel_fingerprint_parts": fingerprint_parts(),
              "source_sha256": source_hashes(), "cupy": cp.__version__}
    corpus.write_header(args.out / "corpus.json", header)

    csv_path = args.out / "corpus.csv"
    if csv_path.exists():
        csv_path.unlink()
    left = args.budget_s - (time.time() - start)

    def progress(i, n, row, dt):
        if i % 25 == 0 or row.get("status") != "ok":
            print(f"[{i}/{n} {time.time() - start:.0f}s] {row['stencil']} {row['unit']} {row['dtype']} t={row['fuse']} "
                  f"{row.get('status')} {row.get('gstencils', '')} ({dt:.1f}s) {row.get('reason', '')[:120]}",
                  flush=True)

    rows = corpus.record(configs, csv_path, budget_s=left, sweeps=args.sweeps, repeats=args.repeats,
                         progress=progress)
    header["recorded"] = len(rows)
    header["wall_s"] = round(time.time() - start, 1)
    corpus.write_header(args.out / "corpus.json", header)

    by = collections.defaultdict(list)
    for r in rows:
        by[(r["unit"], r["precision"])].append(r)
    print(f"\n{header['device']}: copy bandwidth {bandwidth / 1e12:.3f} TB/s; {len(rows)} of {len(configs)} "
          f"configurations in {header['wall_s']} s")
    print(f"{'unit':20} {'prec':5} {'ok':>4} {'failed':>6} {'refused':>7} {'error':>5} {'median GSt/s':>12}")
    for (unit, prec), rs in sorted(by.items()):
        st = collections.Counter(r["status"] for r in rs)
        ok = [float(r["gstencils"]) for r in rs if r["status"] == "ok"]
        print(f"{unit:20} {prec:5} {st['ok']:4} {st['failed']:6} {st['refused']:7} {st['error']:5} "
              f"{statistics.median(ok) if ok else float('nan'):12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
