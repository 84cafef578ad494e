"""How a spec fitted by `tcadvisor calibrate --fit` on a GPU predicts that GPU's whole corpus.

    PYTHONPATH=. python benchmarks/check_calibrate_fit.py SPEC.yaml CORPUS_DIR LABEL

Predicts every run of the corpus with the spec's own ceilings and `refined_constants` (a short design of
about 120 runs on that GPU), beside the bundled constants and the constants fitted on the other GPU's corpus
only (what a GPU the project never saw gets without --fit), and prints one table (markdown).
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tcadvisor import model, refinement  # noqa: E402
from tcadvisor.hardware_schema import load_spec_file  # noqa: E402
from tcadvisor.validate import fitting as F  # noqa: E402


def main(spec_path: str, corpus: str, label: str, other_corpus: str, other_spec: str) -> None:
    from tcadvisor.hardware import resolve_gpu

    spec = load_spec_file(Path(spec_path))
    own = refinement.spec_constants(spec)
    assert own is not None, "the spec carries no usable refined_constants"
    runs = F.load_runs(ROOT / corpus, spec, label)
    other = F.load_runs(ROOT / other_corpus, resolve_gpu(other_spec).spec, "other")
    fits = {"calibrate --fit on this GPU (its short design)": own,
            "the bundled constants (both corpora)": refinement.constants(),
            "fitted on the other GPU's corpus only": F.fit(other)}
    print(f"| {label}: {len(runs)} corpus runs, the spec's measured ceilings | median | 90th pct | within 15 % | "
          "winners | best depth |")
    print("|---|---|---|---|---|---|")
    for name, consts in fits.items():
        rep = F.report(F.predict(runs, consts), runs)
        a = rep["all"]
        print(f"| {name} | {100 * a['median']:.1f} % | {100 * a['p90']:.1f} % | {100 * a['within_15']:.0f} % | "
              f"{rep['winners'][0]}/{rep['winners'][1]} | {rep['best_depth'][0]}/{rep['best_depth'][1]} |")
    print("\nconstants from calibrate --fit: " + ", ".join(f"{s.name} = {own[s]:.4g}" for s in model.FITTED))


if __name__ == "__main__":
    main(*sys.argv[1:6])
