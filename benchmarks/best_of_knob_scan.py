"""One line per configuration of a ``tune_gpu_kernels.py`` scan: the default, the fastest variant and their ratio,
and whether every variant was correct (no GPU needed; the short table a GPU session prints last).

    python benchmarks/best_of_knob_scan.py DIR/tuning.csv
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from summarize_knob_scan import by_configuration  # noqa: E402


def main(path: str) -> int:
    print(f"{path}\nstencil dtype t | default | best | ratio | knobs of the best | all correct")
    for (name, dtype, t), base, rs in by_configuration(path):
        best = max(rs, key=lambda r: float(r["gstencils"]))
        ok = all(r["correct"] == "True" for r in rs)
        print(f"{name} {dtype} {t} | {float(base['gstencils']):.0f} | {float(best['gstencils']):.0f} | "
              f"{float(best['gstencils']) / float(base['gstencils']):.3f} | {best['options']} | {ok}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
