"""Re-record the corpus rows of the kernels a change touched; keep the rows of the kernels it did not.

    python benchmarks/rerecord_corpus.py --base validation/results/h100-sxm-2026-11-25/corpus-b \\
        --out DIR --gpu-spec h100-calibrated --select cc-1d-custom [--budget-s 400]

A kernel change must end with the model refitted on measurements of the kernels as they are now
(tests/test_fingerprint.py).  Where a change touches some kernels only, the runs of the others are
still measurements of today's code: the base header's ``source_sha256`` must equal today's for every
kernel source the selection does not cover, and every kept run's launch, read from the kernel's own
description, must be today's default plan (compile-time constants, shared memory, block); else the
run stops.  This script takes today's design (:func:`tcadvisor.validate.corpus.design`,
same size and seed as the base), records every configuration of the selection -- checked on a small odd
grid, then timed, as ``record_corpus.py`` does -- and writes a corpus of the base's other rows plus the
new ones.  The header says which rows were re-recorded, when, on which device, with that session's
copy bandwidth, and where the rest came from.

Selections:

* ``cc-1d-custom``: the CUDA-core kernel's 1D configurations (kernels/cuda_cores_1d.cu, new on
  2026-11-26) and its custom stencils (upwind, holes, diagonal: taps compiled in, new on 2026-11-26).
"""
from __future__ import annotations

import argparse
import csv
import datetime
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.record_corpus import precompile, source_hashes  # noqa: E402
from tcadvisor.fingerprint import fingerprint_parts, kernel_fingerprint  # noqa: E402
from tcadvisor.hardware import resolve_gpu  # noqa: E402
from tcadvisor.validate import corpus  # noqa: E402

#: selection -> (what it covers, predicate on (unit, stencil), kernel files whose change it accounts for)
SELECTIONS = {
    "cc-1d-custom": ("the CUDA-core kernel's 1D configurations and custom stencils",
                     lambda unit, st: unit == "cuda_core" and (st.dims == 1 or st.shape not in ("box", "star")),
                     ("kernels/cuda_cores_1d.cu", "kernels/cuda_cores_2d.cu", "kernels/cuda_cores_3d.cu",
                      "tcadvisor/gpu/cuda_cores.py", "tcadvisor/gpu/plans.py")),
}


#: Files whose change alters what a kernel runs (as benchmarks/fit_refined.py's KERNEL_SOURCES): a change outside
#: the selection's files needs the whole corpus re-recorded.
KERNEL_SOURCES = ("kernels/", "tcadvisor/gpu/plans.py")
#: Kept rows whose recorded launch is not today's default plan (tcadvisor.validate.corpus.launches_changed).
plans_changed = corpus.launches_changed


def changed_elsewhere(base_header: dict, covered: tuple[str, ...]) -> list[str]:
    """Kernel sources outside the selection whose hash differs from the base's recording (must be none).  The
    planner's files (:data:`tcadvisor.validate.corpus.PLANNER_FILES`) are judged by the kept launches instead."""
    then, now = base_header.get("source_sha256", {}), source_hashes()
    return sorted(f for f in set(then) | set(now) if f.startswith(KERNEL_SOURCES) and f not in covered
                  and f not in corpus.PLANNER_FILES and then.get(f) != now.get(f))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--gpu-spec", required=True)
    ap.add_argument("--select", required=True, choices=sorted(SELECTIONS))
    ap.add_argument("--budget-s", type=float, default=400)
    ap.add_argument("--workers", type=int, default=12)
    args = ap.parse_args()
    start = time.time()
    what, chosen, covered = SELECTIONS[args.select]
    base_header, base_rows = corpus.load_corpus(args.base)
    changed = changed_elsewhere(base_header, covered)
    if changed:
        print(f"kernel sources outside the selection changed since {args.base}: {', '.join(changed)}; record the "
              "whole corpus (benchmarks/record_corpus.py)", file=sys.stderr)
        return 2
    spec = resolve_gpu(args.gpu_spec).spec
    design = base_header.get("design", {})
    configs = [c for c in corpus.design(spec, design.get("n", 600), design.get("seed", 1))
               if chosen(c.unit, c.stencil_obj())]
    kept = [r for r in base_rows if not chosen(r["unit"], corpus.stencil_from_row(r["stencil"], r["offsets"]))]
    moved = plans_changed(kept)
    if moved:
        print(f"{len(moved)} kept runs are no longer today's launch (e.g. {moved[0]}); record the whole corpus",
              file=sys.stderr)
        return 2
    print(f"{len(configs)} configurations of {what} to record; {len(kept)} of {len(base_rows)} base rows kept, "
          "each today's launch", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)

    from benchmarks.gpu_session_kernels import measure_copy_bandwidth
    from tcadvisor.gpu.backend import cupy, device_info

    comp = precompile(configs, args.workers, budget_s=0.45 * args.budget_s)
    print(f"precompile: {comp}", flush=True)
    bandwidth = measure_copy_bandwidth(cupy())
    new_path = args.out / "rerecorded.csv"
    if new_path.exists():
        new_path.unlink()

    def progress(i, n, row, dt):
        if i % 25 == 0 or row.get("status") != "ok":
            print(f"[{i}/{n} {time.time() - start:.0f}s] {row['stencil']} {row['dtype']} t={row['fuse']} "
                  f"{row.get('status')} {row.get('gstencils', '')} {row.get('reason', '')[:120]}", flush=True)

    rows = corpus.record(configs, new_path, budget_s=args.budget_s - (time.time() - start), progress=progress,
                         sweeps=base_header.get("sweeps", 4), repeats=base_header.get("repeats", 5))
    merged = kept + rows
    with open(args.out / "corpus.csv", "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=corpus.COLUMNS, extrasaction="ignore")
        wr.writeheader()
        wr.writerows(merged)
    header = dict(base_header)
    header.update({
        "kernel_fingerprint": kernel_fingerprint(), "kernel_fingerprint_parts": fingerprint_parts(),
        "source_sha256": source_hashes(), "configurations": len(merged), "recorded": len(merged),
        "rerecorded": {"selection": args.select, "what": what, "configurations": len(configs),
                       "recorded": len(rows), "date": datetime.date.today().isoformat(),
                       "device": device_info()["name"], "copy_bandwidth": bandwidth,
                       "wall_s": round(time.time() - start, 1), "precompile": comp},
        "kept_from": {"folder": str(args.base.relative_to(ROOT) if args.base.is_absolute() else args.base),
                      "rows": len(kept), "date": base_header.get("date"),
                      "checked": "kernel sources outside the selection unchanged; every kept run today's launch"},
    })
    corpus.write_header(args.out / "corpus.json", header)
    bad = [r for r in rows if r.get("status") not in ("ok", "refused")]
    print(f"\n{header['rerecorded']['device']}: {len(rows)} of {len(configs)} re-recorded "
          f"({sum(r.get('status') == 'ok' for r in rows)} ok, {len(bad)} failed or errors) in "
          f"{header['rerecorded']['wall_s']} s; corpus of {len(merged)} rows in {args.out}")
    for r in bad:
        print(f"  {r['stencil']} {r['dtype']} t={r['fuse']}: {r.get('status')} {r.get('reason', '')[:150]}")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
