"""The precision's error bound the advisor prints: wired into the answer, and never below what the corpus measured.

Every corpus run (validation/results/*-2026-11-25/corpus*/corpus.csv) was checked after ``check_steps`` steps
against the float64 reference with seed 1; the bound for that configuration and those steps must cover the
measured error (a deterministic sample of rows keeps this under a few seconds).
"""
from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest

from tcadvisor import accuracy, advise
from tcadvisor.report import advice_dict, format_advice as render
from tcadvisor.validate.corpus import stencil_from_row

ROOT = Path(__file__).resolve().parent.parent
CORPORA = sorted(ROOT.glob("validation/results/*-2026-11-25/corpus*/corpus.csv"))


def _rows():
    rows = []
    for path in CORPORA:
        with path.open(newline="") as f:
            rows += [r for r in csv.DictReader(f) if r["status"] == "ok" and r["max_rel_error"]]
    return rows


def test_corpora_exist():
    assert len(CORPORA) >= 2, "the recorded corpora of the H100 and the H200"


@pytest.mark.parametrize("row", random.Random(7).sample(_rows(), 120) if CORPORA else [],
                         ids=lambda r: f"{r['stencil']}-{r['unit']}-{r['dtype']}-t{r['fuse']}")
def test_bound_covers_corpus_error(row):
    stencil = stencil_from_row(row["stencil"], row["offsets"])
    bound = accuracy.expected_relative_error(stencil, row["unit"], row["dtype"], row["precision"], int(row["fuse"]),
                                             int(row["check_steps"]), seed=1)
    assert float(row["max_rel_error"]) <= bound


def _options(**kwargs):
    adv = advise("Box-2D1R", kwargs.pop("dtype"), "h100-calibrated", **kwargs)
    return adv, {o["unit"]: o for o in advice_dict(adv)["options"]}


def test_answer_states_the_precisions_error_and_it_grows_with_steps():
    adv, half = _options(dtype="half", fuse=4, steps=8)
    _, half_long = _options(dtype="half", fuse=4, steps=800)
    _, double = _options(dtype="double", fuse=4, steps=8)
    tc = half["tensor_core"]
    assert tc["expected_error_steps"] == 8 and "FP16" in tc["expected_error_note"]
    assert half_long["tensor_core"]["expected_relative_error"] > 10 * tc["expected_relative_error"]
    # FP16 rounds some eleven binary orders of magnitude coarser than FP64
    assert tc["expected_relative_error"] > 1e6 * double["tensor_core"]["expected_relative_error"]
    assert "Accuracy" in render(adv) and "after 8 steps" in render(adv)
    json.dumps(advice_dict(adv))  # serialisable


def test_base_model_answer_has_no_kernel_accuracy():
    adv = advise("Box-2D1R", "double", "h100-calibrated", fuse=3, model="base")
    assert "Accuracy" not in render(adv)
    assert all("expected_relative_error" not in o for o in advice_dict(adv)["options"])
