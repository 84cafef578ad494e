"""The model module: variants built from one chain, named inputs, intensity-level functions, its documentation."""
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from tcadvisor import model
from tcadvisor.errors import TcAdvisorError

ROOT = Path(__file__).resolve().parent.parent
DISCRETE = ("scenario", "bound_cc", "bound_tc", "fits_cc", "fits_tc")


def random_inputs(n: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return dict(K=rng.integers(1, 500, n).astype(float), t=rng.integers(1, 17, n).astype(float),
                beta=rng.uniform(1, 20, n), alpha=rng.uniform(0.05, 1, n), S=rng.choice([2.0, 4.0, 8.0], n),
                B=rng.uniform(5e11, 8e12, n), P_cc=rng.uniform(1e12, 1e14, n), P_tc=rng.uniform(1e13, 5e15, n))


# --------------------------------------------------------------------------- variants


def test_base_is_the_refined_chain_with_default_terms():
    """Symbolically: every output of ``base`` equals ``refined``'s with each term at its default."""
    base, refined = model.get_variant("base"), model.get_variant("refined")
    assert base.terms == () and {t.name for t in refined.terms} == set(model.TERM_BY_NAME)
    defaults = {term.symbol: term.default for term in model.TERMS}
    assert set(base.outputs) == set(refined.outputs)
    for key, expr in refined.outputs.items():
        specialised = sp.sympify(expr).xreplace(defaults)
        assert sp.simplify(specialised - sp.sympify(base.outputs[key])) == 0, key


def test_base_chain_is_the_papers():
    base = model.get_variant("base")
    shown = {eq.name: (eq.number, sp.sstr(eq.short)) for eq in base.equations}
    assert shown["C_CC"] == ("8", "2*K*t") and shown["I_CC"] == ("8", "C_CC/M_CC")
    assert shown["P_TC"] == ("12", "P_TC_raw*alpha/beta") and shown["R"] == ("13", "P_TC/P_CC")
    # the scenario forms, derived from eq. 13, are the paper's eqs. 14, 15, 17, 18 and 19
    assert shown["R_1"] == ("14", "1")
    assert shown["R_2"] == ("15", "P_tc*alpha/(B*I_CC*beta)")
    assert shown["R_3"] == ("17", "B*I_CC/P_cc")
    assert shown["R_4"] == ("18", "P_tc*alpha/(P_cc*beta)")
    assert shown["beta_max"] == ("19", "P_tc*alpha/P_cc")
    assert not any(eq.refined for eq in base.equations)
    assert "D_CC" not in shown and "D_TC" not in shown  # refined-only steps are folded away


def test_refined_with_default_terms_gives_the_base_numbers():
    """Until the lead derives the terms this is what --model refined prints; the last bit may differ."""
    inputs = random_inputs(200_000)
    base = model.evaluate(**inputs)
    refined = model.evaluate(**inputs, variant="refined")
    n = len(inputs["K"])
    for key in base:
        a = np.broadcast_to(np.asarray(base[key], dtype=float), (n,))
        b = np.broadcast_to(np.asarray(refined[key], dtype=float), (n,))
        if key in DISCRETE:
            assert np.array_equal(a, b), key
        else:
            assert np.allclose(a, b, rtol=1e-12, atol=0), key


def test_evaluate_takes_named_inputs_and_checks_terms():
    with pytest.raises(TypeError):
        model.evaluate(9.0, 3.0, 1.8, 0.5, 8.0, 2e12, 1e13, 2e13)  # positional inputs are refused
    args = dict(K=9.0, t=3.0, beta=1.8, alpha=0.5, S=8.0, B=2e12, P_cc=1e13, P_tc=2e13)
    with pytest.raises(TypeError, match="h_cc"):
        model.evaluate(**args, h_cc=2.0)  # the base model has no terms
    with pytest.raises(TypeError, match="h_xx"):
        model.evaluate(**args, variant="refined", h_xx=2.0)
    with pytest.raises(TcAdvisorError, match="base, refined"):
        model.evaluate(**args, variant="exact")


# --------------------------------------------------------------------------- what each refined term does

ARGS = dict(K=9.0, beta=49 / 27, alpha=7 / 16, S=8.0, B=2e12, P_cc=1e13, P_tc=4e13)


def refined(t=3.0, **terms):
    return {k: float(v) for k, v in model.evaluate(**ARGS, t=t, variant="refined", **terms).items()}


def test_halo_redundancy_costs_useful_throughput_not_executed():
    plain, halo = refined(t=16.0), refined(t=16.0, h_cc=1.5)  # compute-bound on CUDA cores
    assert plain["bound_cc"] == 1
    assert math.isclose(halo["C_cc"], 1.5 * plain["C_cc"])
    assert math.isclose(halo["P_cc_exec"], plain["P_cc_exec"])  # the units are as busy as before
    assert math.isclose(halo["P_cc"], plain["P_cc"] / 1.5)


def test_extra_bytes_and_bandwidth_fraction_lower_a_memory_bound_unit():
    plain = refined(t=1.0)
    assert plain["bound_cc"] == 0
    assert math.isclose(refined(t=1.0, m_cc=16.0)["P_cc"], plain["P_cc"] / 2)  # M = 2S + 16 = twice 2S
    assert math.isclose(refined(t=1.0, eta_B_cc=0.5)["P_cc"], plain["P_cc"] / 2)
    assert math.isclose(refined(t=1.0, eta_B_cc=0.5)["rho_cc"], 2 * plain["rho_cc"])


def test_overlap_serialises_memory_and_compute():
    """At the ridge the two phases take equal time: ω = 0 halves the throughput, ω = 1 is the roofline."""
    t_ridge = ARGS["P_cc"] / ARGS["B"] * ARGS["S"] / ARGS["K"]  # K·t/S = P/B
    roofline = refined(t=t_ridge)
    assert math.isclose(refined(t=t_ridge, omega_cc=0.0)["P_cc"], roofline["P_cc"] / 2)
    assert math.isclose(refined(t=t_ridge, omega_cc=0.5)["P_cc"], roofline["P_cc"] / 1.5)


def test_tile_padding_and_capacity():
    plain, padded = refined(t=8.0), refined(t=8.0, k_tc=2.0)
    assert math.isclose(padded["C_tc"], 2 * plain["C_tc"])
    assert padded["P_tc"] < plain["P_tc"]
    assert refined(t=4.0, tmax_cc=3.0)["fits_cc"] == 0 and refined(t=3.0, tmax_cc=3.0)["fits_cc"] == 1
    assert refined(t=4.0, tmax_tc=3.0)["fits_tc"] == 0 and refined(t=4.0)["fits_tc"] == 1


terms = st.fixed_dictionaries({
    "h_cc": st.floats(1, 3), "m_cc": st.floats(0, 16), "eta_cc": st.floats(0.2, 1), "eta_B_cc": st.floats(0.2, 1),
    "omega_cc": st.floats(0, 1), "k_tc": st.floats(1, 3), "m_tc": st.floats(0, 16), "eta_tc": st.floats(0.2, 1),
    "eta_B_tc": st.floats(0.2, 1), "omega_tc": st.floats(0, 1),
})
configs = st.fixed_dictionaries({
    "K": st.integers(1, 500).map(float), "t": st.integers(1, 16).map(float), "beta": st.floats(1.0, 50.0),
    "alpha": st.floats(0.01, 1.0), "S": st.sampled_from([2.0, 4.0, 8.0]), "B": st.floats(1e11, 1e13),
    "P_cc": st.floats(1e12, 1e14), "P_tc": st.floats(1e12, 5e15),
})


@given(configs, terms)
@settings(max_examples=300, deadline=None)
def test_refined_scenario_forms_equal_the_ratio(c, extra):
    """The refined scenario forms are derived from eq. 13; they must equal P_TC/P_CC for any terms."""
    out = model.evaluate(**c, variant="refined", **extra)
    assert math.isclose(float(out["R"]), float(out["R_ratio"]), rel_tol=1e-9)
    mem_cc, mem_tc = out["I_cc"] < out["rho_cc"], out["I_tc"] < out["rho_tc"]
    assert int(out["scenario"]) == {(True, True): 1, (True, False): 2, (False, True): 3,
                                    (False, False): 4}[(bool(mem_cc), bool(mem_tc))]
    assert int(out["bound_cc"]) == (not mem_cc) and int(out["bound_tc"]) == (not mem_tc)
    assert float(out["P_cc"]) <= min(extra["eta_cc"] * c["P_cc"], extra["eta_B_cc"] * c["B"] * float(out["I_cc"])) \
        / extra["h_cc"] * (1 + 1e-12)


# --------------------------------------------------------------------------- at given intensities


def test_roof_and_ridge():
    intensity = np.array([1.0, 5.0, 10.0, 100.0])
    assert np.allclose(model.roof(intensity, 2e12, 1e13), np.minimum(1e13, 2e12 * intensity), rtol=0)
    assert np.allclose(model.roof(intensity, 2e12, math.inf), 2e12 * intensity, rtol=0)
    assert model.ridge(2e12, 1e13) == 5.0


def test_compare_at_intensity_is_the_model_at_those_intensities():
    inputs = random_inputs(50_000, seed=3)
    out = model.evaluate(**inputs)
    plane = model.compare_at_intensity(out["I_cc"], out["I_tc"], inputs["B"], inputs["P_cc"], inputs["P_tc"])
    assert np.array_equal(plane["scenario"], out["scenario"])
    for key in ("P_cc", "P_tc", "R", "bound_cc", "bound_tc"):
        assert np.allclose(np.asarray(plane[key], dtype=float), np.asarray(out[key], dtype=float), rtol=1e-12), key


def test_base_model_numbers_unchanged_on_the_papers_case_5():
    """Table 3 case 5 of the paper: Box-3D1R, t = 3, double, ConvStencil's α = 1/2 on the A100."""
    out = model.evaluate(K=27.0, t=3.0, beta=343 / 81, alpha=0.5, S=8.0, B=1935e9, P_cc=9.7e12, P_tc=19.5e12)
    assert out["I_cc"] == 10.125 and out["I_tc"] == 85.75 and int(out["scenario"]) == 4
    assert round(float(out["R"]), 3) == 0.237 and round(float(out["beta_threshold"]), 3) == 1.005


# --------------------------------------------------------------------------- documentation


def test_docs_write_out_every_equation_and_term():
    text = (ROOT / "docs" / "model.md").read_text()
    numbers = {eq.number for v in model.VARIANTS for eq in model.get_variant(v).equations if eq.number}
    numbers |= {eq.number for eq in model.GENERAL_FORMS} | {"9", "16"}
    assert numbers == {str(n) for n in range(2, 21)}
    for n in numbers:
        assert f"**({n})**" in text, n
    for term in model.TERMS:
        assert term.name in text, term.name
    from tcadvisor.refinement import HOOKS

    for hook in HOOKS:
        assert f"`{hook}`" in text, hook


def test_no_pointers_outside_the_repository():
    """Docstrings, profiles, tests and docs point to docs/ or to papers by title, never to a spec file outside."""
    pattern = re.compile("SPEC" + r"(\s*§|\.md)")
    offenders = []
    for folder in ("tcadvisor", "tests", "models", "hwspecs", "docs", "benchmarks", "notebooks", "kernels"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".yaml", ".yml", ".md", ".ipynb", ".cu", ".txt"):
                if pattern.search(path.read_text(errors="replace")):
                    offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_query_arguments_do_not_import_the_cli():
    """The cli <-> plots.commands cycle is gone: subcommand modules build their parsers without tcadvisor.cli."""
    code = ("import sys, argparse, tcadvisor.plots.commands as c\n"
            "c.register(argparse.ArgumentParser().add_subparsers(), {})\n"
            "assert 'tcadvisor.cli' not in sys.modules, 'cli imported'\n"
            "from tcadvisor import queryargs, model\n"
            "assert queryargs.MODELS == model.VARIANTS\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
