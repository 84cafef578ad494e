"""The program Nsight Compute profiles: one sweep of each configuration, a marker launch before each.

``python -m tcadvisor.validate.profile_driver MANIFEST.json``.  The manifest lists the
configurations (stencil, dtype, unit, depth, grid, MMA shape, seed) and a status file.  Before
configuration ``i`` the driver launches the empty kernel ``tcadv_marker`` on ``i + 1`` blocks, so
the profile can tell whose launches follow, however many kernels a configuration launches; then it
runs one sweep without checking or timing (``check=False, repeats=1, warmup=0, steps=fuse``).
One JSON line per configuration goes to the status file as soon as it is done, so a profile cut
short still says how far it came.
"""
from __future__ import annotations

import json
import sys

MARKER_SOURCE = 'extern "C" __global__ void tcadv_marker() {}'


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m tcadvisor.validate.profile_driver MANIFEST.json", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as f:
        manifest = json.load(f)
    from ..gpu.backend import cupy
    from ..stencil import parse_stencil
    from .runner import call_run

    cp = cupy()
    marker = cp.RawKernel(MARKER_SOURCE, "tcadv_marker")
    with open(manifest["status"], "a", encoding="utf-8") as status:
        for entry in manifest["entries"]:
            marker((entry["index"] + 1,), (32,), ())
            record = {"index": entry["index"], "ok": True, "error": ""}
            try:
                call_run(parse_stencil(entry["stencil"]), dtype=entry["dtype"], unit=entry["unit"], fuse=entry["fuse"],
                         grid=entry["grid"], steps=entry["fuse"], seed=entry["seed"], check=False,
                         gpu=manifest.get("gpu"), mma=entry.get("mma"), repeats=1, warmup=0)
                cp.cuda.Device().synchronize()
            except Exception as exc:  # noqa: BLE001 - recorded, the next configuration still runs
                record.update(ok=False, error=f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            status.write(json.dumps(record) + "\n")
            status.flush()
            cp.get_default_memory_pool().free_all_blocks()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
