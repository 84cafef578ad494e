"""Warpgroup MMA (wgmma, sm_90a) rates beside the warp-level mma.sync ones, measured in one run.

Why: issue 21's target 6 says a Tensor Core kernel bound by the ``mma.sync`` issue rate wants a
``wgmma`` path.  The stencil kernels' tile is N = 8 (eight outputs per weight band), so before
writing one, this measures what ``wgmma`` delivers at N = 8 -- and at every N up to 256, where the
datasheet's rate is quoted -- against the ``mma.sync`` shapes the kernels issue today, same GPU,
same process.

First a small scan of the issue settings (accumulator chains per warpgroup, warpgroups per block,
commit groups left in flight) at N = 8 and N = 256 for FP16; the best of each N then times every
precision, dense and sparse, A from registers and from shared memory.

    python benchmarks/wgmma_rates.py --out DIR [--quick]

Writes DIR/wgmma-rates.csv (every measurement), DIR/wgmma-scan.csv, DIR/nvrtc-log.txt (the
compiler's messages of one module per instruction: a serialised wgmma says so there) and prints a
table last.
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcadvisor.validate import calibrate as cal  # noqa: E402
from tcadvisor.validate.instructions import MMA_BENCHMARKS  # noqa: E402
from tcadvisor.validate.wgmma import N_VALUES, WgmmaBenchmark  # noqa: E402

def time_wgmma(cp, bench, chains, wg, wait, settings):
    """calibrate's own measurement (tcadvisor.validate.calibrate.measure_wgmma) at these issue settings, and what the
    compiled kernel reports."""
    from tcadvisor.gpu.backend import blocks_per_sm, device_info

    m = cal.measure_wgmma(cp, bench, settings, chains, wg, wait)
    kernel = cal.wgmma_kernel(bench, chains, wg, wait)  # the module measure_wgmma compiled (cached)
    per_sm = blocks_per_sm(kernel, 128 * wg, cal.WGMMA_SMEM)
    blocks = device_info()["sms"] * per_sm
    return {"rate_tflops": m.value / 1e12, "blocks": blocks, "blocks_per_sm": per_sm, "regs": kernel.num_regs,
            "local_bytes": kernel.local_size_bytes,
            "iters": round(m.work / (blocks * wg * chains * bench.flops_per_instruction)),
            "median_s": sorted(m.seconds)[len(m.seconds) // 2], "log": kernel.log}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true", help="N = 8 and 256 only, no scan")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    from tcadvisor.gpu.backend import cupy, device_info

    cp = cupy()
    info = device_info()
    settings = cal.Settings(target_seconds=0.03, repeats=5)
    print(f"# {info['name']} sm_{info['cc'][0]}{info['cc'][1]} {info['sms']} SMs, {time.strftime('%Y-%m-%d %H:%M')}",
          flush=True)

    # the mma.sync / mma.sp shapes the stencil kernels issue, same process
    rows = []
    notes: list[str] = []
    for b in MMA_BENCHMARKS:
        if b.precision == "fp64" or str(b.shape) not in ("m16n8k8", "m16n8k16", "m16n8k32"):
            continue
        if b.precision == "tf32" and not b.sparse and str(b.shape) != "m16n8k8":
            continue
        m = cal.measure_mma(cp, b, settings, notes)
        rows.append({"instruction": "mma.sp" if b.sparse else "mma.sync", "precision": b.precision,
                     "shape": str(b.shape), "a_from": "registers", "chains": 4, "wg": "", "wait": "",
                     "rate_tflops": round(m.value / 1e12, 2), "detail": m.detail})
        print(f"{rows[-1]['instruction']:9s} {b.precision:5s} {b.shape!s:10s} {rows[-1]['rate_tflops']:8.1f}",
              flush=True)

    # the issue settings: chains x warpgroups per block x groups in flight, FP16 dense, N = 8 and 256
    scan = []
    best = {}
    if not args.quick:
        for n in (8, 256):
            bench = WgmmaBenchmark("fp16", n)
            chains_list = (1, 2, 4, 8) if n == 8 else (1, 2)
            for chains in chains_list:
                for wg in (1, 2):
                    for wait in (0, 1):
                        unroll = max(1, 8 // chains)  # divides the loop trips (multiples of 8)
                        try:
                            r = time_wgmma(cp, bench, chains, wg, wait, settings)
                        except Exception as exc:  # noqa: BLE001 - record and go on
                            print(f"scan N={n} chains={chains} wg={wg} wait={wait}: {exc}", flush=True)
                            continue
                        row = {"n": n, "chains": chains, "wg": wg, "wait": wait, "unroll": unroll,
                               **{k: v for k, v in r.items() if k != "log"}}
                        scan.append(row)
                        print(f"scan N={n:3d} chains={chains} wg={wg} wait={wait}: {r['rate_tflops']:7.1f} TFLOP/s "
                              f"({r['blocks_per_sm']} blocks/SM, {r['regs']} regs)", flush=True)
                        if r["rate_tflops"] > best.get(n, (0,))[0]:
                            best[n] = (r["rate_tflops"], chains, wg, wait, unroll)
        with open(os.path.join(args.out, "wgmma-scan.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(scan[0]))
            w.writeheader()
            w.writerows(scan)

    def setting(n):
        small = best.get(8, (0, 4, 2, 1, 2))[1:]
        large = best.get(256, (0, 1, 2, 1, 8))[1:]
        if n <= 32:
            return small
        chains = 1 if n >= 128 else min(2, small[0])
        return (chains, large[1], large[2], max(1, 8 // chains))

    logs = []
    ns = (8, 256) if args.quick else N_VALUES
    for sparse in (False, True):
        for precision in ("tf32", "fp16", "bf16"):
            for a_shared in (False, True):
                for n in ns:
                    bench = WgmmaBenchmark(precision, n, sparse, a_shared)
                    chains, wg, wait, unroll = setting(n)
                    try:
                        r = time_wgmma(cp, bench, chains, wg, wait, settings)
                    except Exception as exc:  # noqa: BLE001
                        print(f"{bench.label}: {exc}", flush=True)
                        rows.append({"instruction": "wgmma.sp" if sparse else "wgmma", "precision": precision,
                                     "shape": str(bench.shape), "a_from": "shared" if a_shared else "registers",
                                     "chains": chains, "wg": wg, "wait": wait, "rate_tflops": "",
                                     "detail": f"failed: {str(exc).splitlines()[0]}"})
                        continue
                    if n in (8, 256):
                        logs.append(f"## {bench.label}\n{r['log'] or '(no messages)'}\n")
                    rows.append({"instruction": "wgmma.sp" if sparse else "wgmma", "precision": precision,
                                 "shape": str(bench.shape), "a_from": "shared" if a_shared else "registers",
                                 "chains": chains, "wg": wg, "wait": wait, "rate_tflops": round(r["rate_tflops"], 2),
                                 "detail": f"{r['blocks']} blocks ({r['blocks_per_sm']}/SM) x {wg} warpgroups x "
                                           f"{chains} chains x {r['iters']} iterations, {r['regs']} registers, "
                                           f"{r['local_bytes']} local bytes, median of {settings.repeats}"})
                    print(f"{rows[-1]['instruction']:9s} {precision:5s} {bench.shape!s:11s} "
                          f"A {rows[-1]['a_from']:9s} {rows[-1]['rate_tflops']:8.1f}", flush=True)

    with open(os.path.join(args.out, "wgmma-rates.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["instruction", "precision", "shape", "a_from", "chains", "wg", "wait",
                                          "rate_tflops", "detail"])
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(args.out, "nvrtc-log.txt"), "w") as f:
        f.write("\n".join(logs))
    print("\n| instruction | precision | shape | A | TFLOP/s |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['instruction']} | {r['precision']} | {r['shape']} | {r['a_from']} | {r['rate_tflops']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
