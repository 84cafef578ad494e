"""'tcadvisor calibrate --fit' on CPU: the GPU runs are synthesised from the refined model itself at known
constants (times noise), so the fit can be checked against the truth; the spec's refined_constants, how the
refined model picks them up (that spec only, today's kernels only), and the schema's one-line refusals."""
import argparse
import csv
import datetime
import os
import sys

import numpy as np
import pytest
import yaml

from _validate_data import h100_like
from tcadvisor import hardware, model, refinement
from tcadvisor.advisor import advise
from tcadvisor.cli import main
from tcadvisor.errors import TcAdvisorError
from tcadvisor.fingerprint import kernel_fingerprint
from tcadvisor.hardware import find_spec, load_spec_file, parse_spec, resolve_gpu
from tcadvisor.validate import calibrate as cal
from tcadvisor.validate import calibrate_fit, corpus, fitting

H100 = "NVIDIA H100 80GB HBM3"
PROPERTIES = {"smem_per_sm": 233472, "smem_optin": 232448, "smem_reserved": 1024, "regs_per_sm": 65536,
              "max_threads_per_sm": 2048, "max_blocks_per_sm": 32, "clock_khz": 1980000}
#: The constants the synthetic runs are generated with: the bundled ones moved by 5 to 50 % (o_c stays at the
#: bundled value, where calibrate --fit holds it), so a fit that returned its start values or the bundled ones
#: would fail.
FACTORS = {"lambda_c": 1.3, "o_c": 1.0, "L_it": 0.7, "lambda_0": 1.4, "lambda_1": 0.8, "eta_B0": 0.95, "L_mem": 1.5}


def known() -> dict:
    return {s: v * FACTORS[s.name] for s, v in refinement.constants().items()}


def calibration():
    c = h100_like()
    c.properties = dict(PROPERTIES)
    return c


def spec_of(c, path, device_names=(), refined=None):
    return parse_spec(yaml.safe_load(cal.spec_text(c, device_names, refined)), path)


def synthetic_rows(configs, spec, constants, sigma=0.03, seed=1) -> list[dict]:
    """Corpus rows as corpus.run_config writes them, with the throughput the refined model predicts at
    ``constants`` times log-normal noise of ``sigma``."""
    rows = []
    for c in configs:
        st = c.stencil_obj()
        mma = corpus.default_mma(c.unit, st, c.fuse, c.precision, spec)
        rows.append({"gpu": H100, "date": "2026-11-23", "shape": c.shape, "stencil": c.stencil, "offsets": c.offsets,
                     "unit": c.unit, "impl": corpus.PROFILES[c.unit], "dtype": c.dtype, "precision": c.precision,
                     "mma": str(mma) if mma else "", "fuse": c.fuse, "grid": "x".join(map(str, c.grid)),
                     "stratum": c.stratum, "status": "ok", "reason": "", "kernel": "", "alpha": "",
                     "gstencils": 1.0})
    runs = fitting.runs_from_rows(rows, spec, "synthetic")
    assert len(runs) == len(rows)
    truth = fitting.predict(runs, constants)
    noise = np.exp(np.random.default_rng(seed).normal(0.0, sigma, len(rows)))
    for row, p, n in zip(rows, truth, noise):
        row["gstencils"] = float(p * n)
    return rows


def assert_recovers(fitted: dict, constants: dict, rel: float, loose: dict | None = None):
    for s in model.FITTED:
        # o_c: fitted by fitting.fit, held at the bundled value (the truth here) by calibrate --fit
        assert fitted[s] == pytest.approx(constants[s], rel=(loose or {}).get(s.name, rel)), s.name


# --------------------------------------------------------------------------- the fit itself


@pytest.fixture(scope="module")
def h100_spec(tmp_path_factory):
    return spec_of(calibration(), tmp_path_factory.mktemp("spec") / "h100-fit.yaml")


def test_the_fit_recovers_the_constants_that_generated_the_runs(h100_spec):
    """Every constant comes back from runs of the whole design: exactly without noise, within 15 % with 3 %
    noise (the fit's soft-L1 loss on log ratios), and the bundled constants are not what it returns.  L_it, the
    wait of a CUDA-core block iteration, within 30 %: since 2026-11-26 a 1D block's iteration is a whole tile of
    t steps (kernels/cuda_cores_1d.cu), so only the 2D and 3D runs weigh it.  o_c, the issue slots beyond the
    counted instructions, within 20 %: since the memory side counts a warp's own work per iteration (t_it, from the
    same counts as c_lat, 2026-12-01) fewer runs are issue-bound enough to weigh it.  Seeds 1, 2, 3, 7, 11 of this
    design: o_c 0.84-1.16 of the truth, L_it 0.89-1.12, the other constants 0.92-1.08."""
    configs = [c for c in corpus.design(h100_spec, 420) if h100_spec.has(c.unit, c.precision)]
    truth = known()
    assert_recovers(fitting.fit(fitting.runs_from_rows(synthetic_rows(configs, h100_spec, truth, 0.0),
                                                       h100_spec, "x")), truth, 0.01)
    noisy = fitting.fit(fitting.runs_from_rows(synthetic_rows(configs, h100_spec, truth, 0.03, seed=7),
                                               h100_spec, "x"))
    assert_recovers(noisy, truth, 0.15, loose={"L_it": 0.30, "o_c": 0.20})
    assert noisy[model.L_mem] != pytest.approx(refinement.constants()[model.L_mem], rel=0.2)


def test_the_short_design_predicts_the_whole_space(h100_spec):
    """calibrate --fit runs about 120 configurations, not the corpus's 360: every unit and precision, whole
    curves of up to three depths.  Fitted on them (3 % noise), the model predicts every configuration of
    the full design within a few per cent of the truth."""
    todo = calibrate_fit.plan(h100_spec, 120)
    assert 110 <= len(todo) <= 130
    everything = [c for c in corpus.design(h100_spec, 420) if h100_spec.has(c.unit, c.precision)]
    assert {(c.unit, c.precision) for c in todo} == {(c.unit, c.precision) for c in everything}
    curves = {}
    for c in todo:
        curves.setdefault(c.curve, []).append(c.fuse)
    assert all(len(d) <= 3 for d in curves.values()) and sum(len(d) >= 2 for d in curves.values()) > 30
    assert {c.stencil_obj().dims for c in todo} == {1, 2, 3}
    truth = known()
    found = calibrate_fit.section(synthetic_rows(todo, h100_spec, truth, 0.03, seed=3), h100_spec, H100, todo)
    fitted = {getattr(model, k): v for k, v in found["constants"].items()}
    runs = fitting.runs_from_rows(synthetic_rows(everything, h100_spec, truth, 0.0), h100_spec, "x")
    err = np.abs(fitting.predict(runs, fitted) / np.array([r.measured for r in runs]) - 1)
    assert np.median(err) < 0.01 and np.quantile(err, 0.9) < 0.03
    assert found["runs"] == len(todo) and 0.01 < found["in_sample_median_error"] < 0.04  # the 3 % noise
    assert found["kernel_fingerprint"] == kernel_fingerprint()


def test_a_chain_cut_short_by_the_budget_is_refused(h100_spec):
    todo = calibrate_fit.plan(h100_spec, 120)
    rows = synthetic_rows(todo, h100_spec, known())
    few_cc = [r for r in rows if r["unit"] != "cuda_core"] + [r for r in rows if r["unit"] == "cuda_core"][:3]
    with pytest.raises(TcAdvisorError, match=r"^calibrate --fit: 3 CUDA-core runs completed, fewer than the 8 that "
                                             r"fit lambda_c, L_it; give it more --fit-minutes$"):
        calibrate_fit.section(few_cc, h100_spec, H100, todo)
    with pytest.raises(TcAdvisorError, match="5 of 5 recorded configurations ran correctly, fewer than the 20"):
        calibrate_fit.section(rows[:5], h100_spec, H100, todo)


def test_a_gpu_without_a_units_kernels_keeps_that_chains_bundled_constants(h100_spec):
    """No Tensor Core configuration in the design (a GPU none of them runs on): λ0 and λ1 stay the bundled
    values, pinned, and the section says so; the CUDA-core constants are fitted."""
    todo = [c for c in calibrate_fit.plan(h100_spec, 120) if c.unit == "cuda_core"]
    truth = known()
    found = calibrate_fit.section(synthetic_rows(todo, h100_spec, truth, 0.0), h100_spec, H100, todo)
    bundled = refinement.constants()
    assert found["constants"]["lambda_0"] == bundled[model.lambda_0]
    assert found["constants"]["lambda_1"] == bundled[model.lambda_1]
    assert found["constants"]["lambda_c"] == pytest.approx(truth[model.lambda_c], rel=0.02)
    assert "lambda_0, lambda_1 kept at the bundled values (no kernel of theirs runs here)" in found["source"]
    # o_c is fitted on the project's corpora only; a calibration holds it at the bundled value and says so
    assert found["constants"]["o_c"] == bundled[model.o_c]
    assert "o_c held at the bundled value" in found["source"]


# --------------------------------------------------------------------------- the command


@pytest.fixture
def fake_gpu_fit(monkeypatch, tmp_path):
    """cmd_calibrate --fit without a GPU: the ceilings are the project's H100's, and corpus.record answers each
    configuration with the model's throughput at known() constants times 3 % noise (two fail their check)."""
    from tcadvisor.gpu import backend

    c = calibration()
    monkeypatch.setattr(backend, "cupy", lambda: object())
    monkeypatch.setattr(cal, "calibrate", lambda settings, progress: c)
    spec = spec_of(c, tmp_path / "for-the-fake.yaml")
    recorded = []

    def fake_record(configs, out, *, budget_s, sweeps=4, repeats=5, progress=None):
        recorded.append((len(configs), budget_s))
        rows = synthetic_rows(configs, spec, known())
        for row in rows[:2]:
            row.update(status="failed", reason="check failed: 1.0 > 1e-12", gstencils="")
        with open(out, "a", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=corpus.COLUMNS, extrasaction="ignore")
            writer.writeheader()
            for i, row in enumerate(rows):
                writer.writerow(row)
                if progress is not None:
                    progress(i + 1, len(configs), row, 0.5)
        return rows

    monkeypatch.setattr(corpus, "record", fake_record)
    return recorded


def _args(output=None, fit=True, configs=None, minutes=None):
    return argparse.Namespace(output=output, quick=True, repeats=None, fit=fit, fit_configs=configs,
                              fit_minutes=minutes)


def test_calibrate_fit_writes_refined_constants_and_keeps_the_runs(tmp_path, fake_gpu_fit, capsys):
    from tcadvisor.validate.commands import cmd_calibrate

    target = tmp_path / "mine.yaml"
    assert cmd_calibrate(_args(str(target), minutes=2.5)) == 0
    n, budget = fake_gpu_fit[0]
    assert 110 <= n <= 130 and budget == 150
    spec = load_spec_file(target)
    rc = spec.refined_constants
    assert rc is not None and rc.runs == n - 2 and rc.fitted == "2026-11-23" and rc.kernel_fingerprint == \
        kernel_fingerprint()
    assert rc.corpus == "mine.corpus.csv" and "2 more failed" in rc.source
    truth = known()
    assert rc.values["lambda_c"] == pytest.approx(truth[model.lambda_c], rel=0.2)
    assert rc.values["eta_B0"] == pytest.approx(truth[model.eta_B0], rel=0.02)
    assert 0.01 < rc.in_sample_median_error < 0.04
    raw = yaml.safe_load(target.read_text())
    assert list(raw)[-1] == "refined_constants" and set(raw["refined_constants"]["constants"]) == {
        s.name for s in model.FITTED}
    kept = calibrate_fit.read_rows(tmp_path / "mine.corpus.csv")
    assert len(kept) == n and sum(r["status"] == "ok" for r in kept) == rc.runs
    # the runs kept can be fitted again, to the same constants
    again = calibrate_fit.section(kept, spec, H100, calibrate_fit.plan(spec, 120), "mine.corpus.csv", "2026-11-23")
    assert again["constants"] == pytest.approx(dict(rc.values), rel=1e-3)
    err = capsys.readouterr().err.splitlines()
    assert any(f"configurations of the bundled kernels, checked and timed, for at most 2.5 min; runs kept in "
               f"{tmp_path / 'mine.corpus.csv'}" in line for line in err)
    assert any(f"fit: {rc.runs} runs, in-sample median error" in line for line in err)
    assert not any("fit [" in line for line in err)  # no per-configuration progress off a terminal


def test_progress_is_one_line_per_configuration_on_a_terminal(tmp_path, fake_gpu_fit, capsys, monkeypatch):
    from tcadvisor.validate.commands import cmd_calibrate

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert cmd_calibrate(_args(str(tmp_path / "mine.yaml"), configs=40)) == 0
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "fit [" in ln]
    assert len(lines) == fake_gpu_fit[0][0] and 35 <= len(lines) <= 45
    assert lines[0].startswith(f"calibrate: fit [1/{len(lines)}, 0:0") and "check failed" in lines[0]
    assert "GStencils/s (0.5 s)" in lines[-1] and f"[{len(lines)}/{len(lines)}," in lines[-1]


def test_advise_uses_the_constants_fitted_on_this_gpu(tmp_path, fake_gpu_fit, monkeypatch, capsys):
    """calibrate --fit without -o: the cache's file is used for the detected GPU, and the answer says the
    refined model ran with the constants fitted there; --gpu naming the bundled spec gets the bundled ones."""
    from tcadvisor.validate.commands import cmd_calibrate

    monkeypatch.setenv("TCADVISOR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(hardware, "detect_local_gpu_name", lambda: H100)
    assert cmd_calibrate(_args()) == 0
    specs = tmp_path / "cache" / "specs"
    assert sorted(p.name for p in specs.iterdir()) == ["nvidia-h100-80gb-hbm3-2026-11-23.corpus.csv",
                                                      "nvidia-h100-80gb-hbm3-2026-11-23.yaml"]
    resolved = resolve_gpu(None)
    rc = resolved.spec.refined_constants
    assert "using your calibrated spec" in resolved.note and rc is not None
    adv = advise("Box-2D1R", "double", gpu=resolved.spec, fuse=2)
    cc = next(o for o in adv.options if o.unit == "cuda_core")
    assert cc.model == "refined"
    assert cc.model_note.endswith(f"; constants fitted on this GPU (calibrate --fit, 2026-11-23, {rc.runs} runs)")
    assert cc.term_inputs[model.L_it] == rc.values["L_it"]
    bundled = advise("Box-2D1R", "double", gpu="h100", fuse=2)
    assert next(o for o in bundled.options if o.unit == "cuda_core").model_note.endswith(
        "; the bundled constants fitted on H100 and H200 corpora")


def test_fit_options_are_refused_in_one_line_before_measuring(tmp_path, fake_gpu_fit, monkeypatch, capsys):
    ran = []
    monkeypatch.setattr(cal, "calibrate", lambda settings, progress: ran.append(1))
    cases = [(["--fit", "--fit-configs", "5", "-o", "x.yaml"], "--fit-configs 5: expected at least 20 configurations "
                                                               "(default 120)"),
             (["--fit", "--fit-minutes", "0", "-o", "x.yaml"], "--fit-minutes 0: expected a positive number of "
                                                               "minutes (default 5)"),
             (["--fit", "--fit-minutes", "nan", "-o", "x.yaml"], "--fit-minutes nan: expected a positive number"),
             (["--fit-configs", "50", "-o", "x.yaml"], "--fit-configs sizes the refined model's fit; add --fit"),
             (["--fit", "-o", "-"], "--fit keeps its runs beside the spec file (<spec>.corpus.csv); with -o - there "
                                    "is none: give -o FILE, or no -o for your cache")]
    for argv, message in cases:
        assert main(["calibrate", *argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"tcadvisor: error: {message}"), err
    assert ran == [] and fake_gpu_fit == []


def test_a_fit_that_cannot_run_keeps_the_ceilings_and_says_why(tmp_path, fake_gpu_fit, monkeypatch, capsys):
    monkeypatch.setattr(corpus, "record", lambda configs, out, **kw: [])
    target = tmp_path / "mine.yaml"
    assert main(["calibrate", "--fit", "-o", str(target)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (f"tcadvisor: error: calibrate --fit: 0 of 0 recorded configurations ran correctly, fewer than "
                       f"the 20 a fit needs; give it more --fit-minutes; wrote {target} with the measured ceilings "
                       "only (the bundled constants apply)")
    spec = load_spec_file(target)
    assert spec.refined_constants is None and spec.multiprocessors is not None


# --------------------------------------------------------------------------- the refined model and the section


def section(**changes):
    out = {"constants": {"lambda_c": 0.8, "o_c": 0.0, "L_it": 350.0, "lambda_0": 22.0, "lambda_1": 1.9,
                         "eta_B0": 0.87, "L_mem": 6.2e-07},
           "kernel_fingerprint": kernel_fingerprint(), "runs": 118, "fitted": "2026-11-25",
           "in_sample_median_error": 0.083, "corpus": "x.corpus.csv", "source": "tcadvisor calibrate --fit"}
    out.update(changes)
    return out


def test_the_refined_model_uses_a_specs_own_constants_for_that_spec_only(tmp_path):
    c = calibration()
    own = tmp_path / "own.yaml"
    own.write_text(cal.spec_text(c, (), section()))
    plain = tmp_path / "plain.yaml"
    plain.write_text(cal.spec_text(c))
    spec, other = load_spec_file(own), load_spec_file(plain)
    mine = {getattr(model, k): v for k, v in section()["constants"].items()}
    assert refinement.constants(spec) == mine
    assert refinement.constants(other) == refinement.constants() == refinement.constants(find_spec("h100"))
    assert refinement.constants() != mine
    a = next(o for o in advise("Box-3D1R", "double", gpu=str(own), fuse=2).options if o.unit == "cuda_core")
    b = next(o for o in advise("Box-3D1R", "double", gpu=str(plain), fuse=2).options if o.unit == "cuda_core")
    assert a.model_note.endswith("; constants fitted on this GPU (calibrate --fit, 2026-11-25, 118 runs)")
    assert b.model_note.endswith("; the bundled constants fitted on H100 and H200 corpora")
    assert a.terms["eta_cc"] != b.terms["eta_cc"] and a.values["gstencils_cc"] != b.values["gstencils_cc"]
    # the prediction is the fit's model at the spec's constants, term for term
    row = {"stencil": "Box-3D1R", "offsets": "", "unit": "cuda_core", "dtype": "double", "precision": "fp64",
           "fuse": 2, "grid": "x".join(map(str, corpus._default_grid(3))), "status": "ok", "gstencils": 1.0}
    run = fitting.runs_from_rows([row], spec, "x")
    assert fitting.predict(run, mine)[0] == pytest.approx(a.values["gstencils_cc"], rel=1e-9)
    # using_constants (what the fit evaluates candidates with) wins over the spec's own
    with refinement.using_constants(refinement.constants()):
        assert refinement.constants(spec) == refinement.constants(other)


def test_constants_for_other_kernels_fall_back_with_one_note(tmp_path, capsys):
    stale = tmp_path / "stale.yaml"
    stale.write_text(cal.spec_text(calibration(), (), section(kernel_fingerprint="0123456789abcdef")))
    spec = load_spec_file(stale)
    assert refinement.constants(spec) == refinement.constants()
    opt = next(o for o in advise("Box-2D1R", "double", gpu=str(stale), fuse=2).options if o.unit == "cuda_core")
    assert opt.model_note.endswith("; the bundled constants fitted on H100 and H200 corpora (this spec's "
                                   "calibrate --fit constants are for other kernels)")
    err = capsys.readouterr().err.splitlines()
    assert err == [f"tcadvisor: note: {stale}: refined_constants fitted for other kernels (0123456789abcdef; these "
                   f"are {kernel_fingerprint()}), so the bundled constants apply; run calibrate --fit again"]


@pytest.mark.parametrize("change, field, problem", [
    ({"refined_constants": [1, 2]}, "refined_constants", "expected a mapping with constants, kernel_fingerprint"),
    ({"runs": None}, "refined_constants.runs", "missing (the section needs constants, kernel_fingerprint, runs"),
    ({"constants": {"lambda_c": 0.8}}, "refined_constants.constants.o_c", "missing (every constant"),
    ({"constants": {**section()["constants"], "L_it": -3.0}}, "refined_constants.constants.L_it",
     "expected a finite number >= 0, got -3.0"),
    ({"constants": {**section()["constants"], "L_mem": "4e-7"}}, "refined_constants.constants.L_mem",
     "expected a number >= 0, got '4e-7' (write the number without quotes)"),
    ({"constants": {**section()["constants"], "eta_B0": 0}}, "refined_constants.constants.eta_B0",
     "expected a positive fraction of the bandwidth, got 0"),
    ({"constants": {**section()["constants"], "lambda_2": 1.0}}, "refined_constants.constants.lambda_2",
     "unknown key; expected lambda_c, o_c, L_it"),
    ({"kernel_fingerprint": "c81b6494"}, "refined_constants.kernel_fingerprint",
     "expected 16 lower-case hex digits"),
    ({"runs": 0}, "refined_constants.runs", "expected a positive integer (runs the fit used), got 0"),
    ({"fitted": "yesterday"}, "refined_constants.fitted", "expected a date YYYY-MM-DD, got 'yesterday'"),
    ({"in_sample_median_error": float("nan")}, "refined_constants.in_sample_median_error",
     "expected a finite number >= 0, got nan"),
    ({"comment": "x"}, "refined_constants.comment", "unknown key; expected constants, kernel_fingerprint"),
    ({"multiprocessors": None}, "refined_constants", "the refined model needs the multiprocessors section"),
])
def test_the_schema_refuses_a_malformed_section_in_one_line(tmp_path, change, field, problem):
    raw = yaml.safe_load(cal.spec_text(calibration(), (), section()))
    if "refined_constants" in change:
        raw["refined_constants"] = change["refined_constants"]
    elif "multiprocessors" in change:
        del raw["multiprocessors"]
    else:
        raw["refined_constants"].update(change)
        if change.get("runs", 1) is None:
            del raw["refined_constants"]["runs"]
    path = tmp_path / "bad.yaml"
    with pytest.raises(TcAdvisorError) as exc:
        parse_spec(raw, path)
    message = str(exc.value)
    assert "\n" not in message and message.startswith(f"GPU spec {path}: field '{field}': {problem}"), message


def test_a_yaml_date_and_the_documented_example_load(tmp_path):
    """'fitted: 2026-11-25' unquoted is a YAML date: read as the same day.  The example section in
    docs/hwspec-format.md loads."""
    import re
    from pathlib import Path

    text = cal.spec_text(calibration(), (), section()).replace("fitted: '2026-11-25'", "fitted: 2026-11-25")
    assert "fitted: 2026-11-25\n" in text
    (tmp_path / "d.yaml").write_text(text)
    assert load_spec_file(tmp_path / "d.yaml").refined_constants.fitted == "2026-11-25"
    doc = (Path(__file__).resolve().parent.parent / "docs" / "hwspec-format.md").read_text()
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", doc, re.S) if b.startswith("refined_constants:"))
    raw = yaml.safe_load(cal.spec_text(calibration()))
    raw.update(yaml.safe_load(block))
    got = parse_spec(raw, tmp_path / "doc.yaml").refined_constants
    assert got.runs > 0 and set(got.values) == {s.name for s in model.FITTED}


def test_a_malformed_section_is_one_line_and_exit_2_on_the_command_line(tmp_path, run_cli):
    bad = tmp_path / "bad.yaml"
    bad.write_text(cal.spec_text(calibration(), (), section(runs="many")))
    r = run_cli("advise", "Box-2D1R", "--fuse", "1", "--gpu", str(bad))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [f"tcadvisor: error: GPU spec {bad}: field 'refined_constants.runs': "
                                             "expected a positive integer (runs the fit used), got 'many'"]


def test_today_is_the_default_fit_date(h100_spec):
    todo = [c for c in calibrate_fit.plan(h100_spec, 120)]
    found = calibrate_fit.section(synthetic_rows(todo, h100_spec, known(), 0.0), h100_spec, H100, todo)
    assert found["fitted"] == datetime.date.today().isoformat()
    assert os.path.basename(str(calibrate_fit.corpus_path(h100_spec.path))) == "h100-fit.corpus.csv"


def test_corpus_rows_carry_the_refresh_time_where_it_was_recorded(tmp_path, monkeypatch):
    """``run_config`` records the ghost refresh ``run`` timed alone; the readers parse it as a number, and as NaN in
    corpora recorded before the column existed (the committed ones of 2026-11-27)."""
    import types

    from tcadvisor.gpu import runner as gpu_runner

    def fake_run(st, dtype, unit=None, fuse=1, grid=None, steps=1, seed=0, check=True, repeats=5, warmup=1):
        return types.SimpleNamespace(device="GPU", mma=None, steps=steps, seconds=1e-3, gstencils=5.0,
                                     refresh_seconds=4.5e-5, alpha=None, kernel="k", passed=True, max_rel_error=0.0,
                                     tolerance=1.0)

    monkeypatch.setattr(gpu_runner, "run", fake_run)
    cfg = corpus.design(resolve_gpu("h100-calibrated").spec, 40, 1)[0]
    row = corpus.run_config(cfg)
    assert row["status"] == "ok" and row["refresh_seconds"] == 4.5e-5
    path = tmp_path / "corpus.csv"
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=corpus.COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerow({**row, "date": "2026-11-28"})
    (tmp_path / "corpus.json").write_text("{}")
    _, rows = corpus.load_corpus(tmp_path)
    assert rows[0]["refresh_seconds"] == 4.5e-5 and rows[0]["gstencils"] == 5.0
    assert calibrate_fit.read_rows(path)[0]["refresh_seconds"] == 4.5e-5
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    _, old = corpus.load_corpus(os.path.join(root, "validation/results/h100-sxm-2026-11-27/corpus"))
    assert len(old) == 1064 and all(np.isnan(r["refresh_seconds"]) for r in old)
