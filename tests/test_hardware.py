"""Hardware specs: every bundled file validates, every number has a source, bad files fail clearly."""
import textwrap
from pathlib import Path

import pytest
import yaml

from tcadvisor.errors import TcAdvisorError
from tcadvisor.hardware import (PRECISIONS, UNITS, catalog, default_spec, find_spec, load_spec_file,
                                resolve_gpu, spec_for_device_name)

REQUIRED = ["a100-80gb-pcie", "a100-80gb-sxm", "h100-sxm", "h100-pcie", "h200-sxm", "v100-sxm2",
            "l40s", "rtx4090", "b200", "mi250x", "mi300x"]


def test_required_gpus_are_bundled():
    assert set(REQUIRED) <= set(catalog())


def test_default_is_the_papers_a100():
    spec = default_spec()
    assert spec.key == "a100-80gb-pcie"
    # the paper's hardware numbers ("Do We Need Tensor Cores for Stencil Computations?", §3.3 and §5.1)
    assert spec.bandwidth.value == 1935e9
    assert spec.peak("cuda_core", "fp64") == 9.7e12
    assert spec.peak("tensor_core", "fp64") == 19.5e12
    assert spec.peak("cuda_core", "fp32") == 19.5e12
    assert spec.peak("tensor_core", "tf32") == 156e12
    assert spec.peak("sparse_tensor_core", "tf32") == 312e12
    assert spec.peak("tensor_core", "fp16") == 312e12
    assert spec.peak("sparse_tensor_core", "fp16") == 624e12


@pytest.mark.parametrize("key", sorted(catalog()))
def test_every_number_has_a_source(key):
    spec = catalog()[key]
    assert spec.bandwidth.source.strip()
    for unit, per in spec.peaks.items():
        assert unit in UNITS
        for precision, rate in per.items():
            assert precision in PRECISIONS
            assert rate.value > 0 and rate.source.strip()
    assert not spec.has("sparse_tensor_core", "fp64")  # no GPU has sparse FP64
    # every source key used in the raw file resolves to a citation, not to itself
    raw = yaml.safe_load(spec.path.read_text())
    keys = set(raw.get("sources", {}))
    for unit, per in raw["peak"].items():
        for precision, entry in per.items():
            assert entry["source"] in keys or len(entry["source"]) > 20, (unit, precision)


def test_v100_lacks_tf32_and_sparse():
    v100 = find_spec("v100")
    assert not v100.has("tensor_core", "tf32")
    assert "sparse_tensor_core" not in v100.peaks


@pytest.mark.parametrize("query, key", [
    ("a100", "a100-80gb-pcie"), ("A100", "a100-80gb-pcie"), ("h100", "h100-sxm"), ("H100-PCIe", "h100-pcie"),
    ("h200", "h200-sxm"), ("mi300x", "mi300x"), ("NVIDIA B200", "b200"), ("rtx4090", "rtx4090"),
])
def test_aliases(query, key):
    assert find_spec(query).key == key


def test_aliases_unique():
    seen = {}
    for spec in catalog().values():
        for name in {spec.key, *spec.aliases}:
            assert name not in seen, f"{name} in {spec.key} and {seen[name]}"
            seen[name] = spec.key


@pytest.mark.parametrize("device, key", [
    ("NVIDIA H100 80GB HBM3", "h100-sxm"), ("NVIDIA H100 PCIe", "h100-pcie"), ("NVIDIA H200", "h200-sxm"),
    ("NVIDIA A100-SXM4-80GB", "a100-80gb-sxm"), ("NVIDIA A100 80GB PCIe", "a100-80gb-pcie"),
])
def test_device_names(device, key):
    assert spec_for_device_name(device).key == key


def test_unknown_gpu_lists_choices():
    with pytest.raises(TcAdvisorError, match="unknown GPU 'h1000'.*a100"):
        find_spec("h1000")


def test_default_without_gpu(monkeypatch):
    monkeypatch.setattr("tcadvisor.hardware.detect_local_gpu_name", lambda: None)
    r = resolve_gpu(None)
    assert r.spec.key == "a100-80gb-pcie" and "no GPU detected" in r.note


def test_detected_gpu_without_spec_falls_back_loudly(monkeypatch):
    monkeypatch.setattr("tcadvisor.hardware.detect_local_gpu_name", lambda: "NVIDIA Quantum 9000")
    r = resolve_gpu(None)
    assert r.spec.default and "Quantum 9000" in r.note


GOOD = textwrap.dedent("""\
    name: Test GPU
    sources: {ds: "Test datasheet, table 1"}
    bandwidth: {value: 1000, unit: GB/s, source: ds}
    peak:
      cuda_core:
        fp64: {value: 10, source: ds}
      tensor_core:
        fp64: {value: 20, source: ds}
    mma_shapes:
      source: ds
      tensor_core:
        fp64: [m8n8k4]
""")


def test_spec_from_path(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text(GOOD)
    spec = find_spec(str(f))
    assert spec.name == "Test GPU" and spec.ridge("tensor_core", "fp64") == 20e12 / 1000e9


@pytest.mark.parametrize("edit, field", [
    (lambda t: t.replace("bandwidth: {value: 1000, unit: GB/s, source: ds}\n", ""), "'bandwidth'"),
    (lambda t: t.replace("value: 1000", "value: -5"), "bandwidth.value"),
    (lambda t: t.replace("value: 1000", "value: fast"), "bandwidth.value"),
    (lambda t: t.replace("unit: GB/s", "unit: MB/s"), "bandwidth.unit"),
    (lambda t: t.replace("fp64: {value: 10, source: ds}", "fp64: {value: 10}"), "peak.cuda_core.fp64.source"),
    (lambda t: t.replace("tensor_core:\n    fp64: {value: 20", "tensor_core:\n    fp99: {value: 20"),
     "peak.tensor_core.fp99"),
    (lambda t: t.replace("  tensor_core:\n    fp64: {value: 20, source: ds}", "  warp_core:\n    fp64: {value: 20, source: ds}"),
     "peak.warp_core"),
    (lambda t: t.replace("[m8n8k4]", "[m8n8]"), "mma_shapes.tensor_core.fp64"),
    (lambda t: t.replace("name: Test GPU\n", ""), "'name'"),
    (lambda t: t.replace("  cuda_core:\n    fp64: {value: 10, source: ds}\n", ""), "peak.cuda_core"),
])
def test_malformed_specs_name_file_and_field(tmp_path, edit, field):
    f = tmp_path / "broken.yaml"
    f.write_text(edit(GOOD))
    with pytest.raises(TcAdvisorError) as err:
        load_spec_file(f)
    msg = str(err.value)
    assert str(f) in msg and field in msg and "\n" not in msg


def test_not_yaml(tmp_path):
    f = tmp_path / "broken.yaml"
    f.write_text("name: [unclosed\n")
    with pytest.raises(TcAdvisorError, match="not valid YAML"):
        load_spec_file(f)


def test_extra_spec_dirs(tmp_path, monkeypatch):
    (tmp_path / "calibrated.yaml").write_text(GOOD.replace("Test GPU", "My calibrated GPU"))
    monkeypatch.setenv("TCADVISOR_HWSPEC_PATH", str(tmp_path))
    assert find_spec("calibrated").name == "My calibrated GPU"


# --------------------------------------------------------------------------- the catalogue with user directories

import json  # noqa: E402

from tcadvisor.paper import INCONSISTENT  # noqa: E402

BUNDLED_A100 = (Path(__file__).resolve().parent.parent / "hwspecs" / "a100-80gb-pcie.yaml").read_text()


def stderr_lines(r):
    return [line for line in r.stderr.splitlines() if line.strip()]


def test_cli_survives_a_broken_user_file(run_cli, tmp_path):
    (tmp_path / "broken.yaml").write_text("name: [unclosed\n")
    env = {"TCADVISOR_HWSPEC_PATH": str(tmp_path)}
    for args in (["gpus"], ["gpus", "--json"], ["advise", "Box-2D1R", "--fuse", "2", "--gpu", "h100"]):
        r = run_cli(*args, env=env)
        assert r.returncode == 0, r.stderr
        lines = stderr_lines(r)
        assert len(lines) == 1 and "warning" in lines[0] and str(tmp_path / "broken.yaml") in lines[0], r.stderr
        assert "not valid YAML" in lines[0]
    # asked for by its key: the file's own error, one line, exit 2 (and no warning about it as well)
    r = run_cli("advise", "Box-2D1R", "--gpu", "broken", env=env)
    assert r.returncode == 2 and r.stdout == ""
    lines = stderr_lines(r)
    assert len(lines) == 1 and lines[0].startswith("tcadvisor: error:") and "broken.yaml" in lines[0], r.stderr


def test_broken_user_file_named_by_alias_is_an_error_only_for_that_alias(run_cli, tmp_path):
    (tmp_path / "mine.yaml").write_text("name: Mine\naliases: [mygpu, h100]\nbandwidth: 5\npeak: {}\n")
    env = {"TCADVISOR_HWSPEC_PATH": str(tmp_path)}
    r = run_cli("advise", "Box-2D1R", "--gpu", "mygpu", env=env)
    assert r.returncode == 2 and "bandwidth must be a mapping with value and unit" in r.stderr
    r = run_cli("advise", "Box-2D1R", "--fuse", "1", "--gpu", "h100", "--json", env=env)  # h100 stays the bundled one
    assert r.returncode == 0 and json.loads(r.stdout)["gpu_key"] == "h100-sxm"


def test_user_file_overrides_bundled_by_key_with_a_note(run_cli, tmp_path):
    (tmp_path / "a100-80gb-pcie.yml").write_text(  # .yml is read too
        BUNDLED_A100.replace("value: 1935", "value: 1000").replace("name: NVIDIA A100 80GB PCIe", "name: My A100"))
    (tmp_path / "other.yaml").write_text(GOOD.replace("name: Test GPU", "name: Other\ndefault: true"))
    env = {"TCADVISOR_HWSPEC_PATH": str(tmp_path)}
    r = run_cli("gpus", "--json", env=env)
    assert r.returncode == 0 and "Traceback" not in r.stderr
    gpus = {g["key"]: g for g in json.loads(r.stdout)}
    assert gpus["a100-80gb-pcie"]["name"] == "My A100" and gpus["a100-80gb-pcie"]["bandwidth_gbs"] == 1000
    assert gpus["a100-80gb-pcie"]["bundled"] is False and gpus["other"]["bundled"] is False
    # the default stays the A100 key, although 'other' says default: true
    assert [k for k, g in gpus.items() if g["default"]] == ["a100-80gb-pcie"]
    lines = stderr_lines(r)
    assert any("overrides the bundled GPU spec 'a100-80gb-pcie'" in l and "a100-80gb-pcie.yml" in l for l in lines)
    assert any("'default: true'" in l and "other.yaml" in l for l in lines)
    assert len(lines) == 2, r.stderr
    r = run_cli("advise", "Box-2D1R", "--fuse", "1", "--gpu", "a100", "--json", env=env)
    assert r.returncode == 0 and json.loads(r.stdout)["gpu"] == "My A100"


def test_reproduce_paper_uses_the_bundled_a100_despite_an_override(run_cli, tmp_path):
    (tmp_path / "a100-80gb-pcie.yaml").write_text(BUNDLED_A100.replace("value: 1935", "value: 1000"))
    plain = run_cli("reproduce-paper", "--json")
    r = run_cli("reproduce-paper", "--json", env={"TCADVISOR_HWSPEC_PATH": str(tmp_path)})
    assert r.returncode == 0 and plain.returncode == 0
    out, ref = json.loads(r.stdout), json.loads(plain.stdout)
    assert out == ref  # the same tables and the same (bundled) spec
    assert out["spec"]["bundled"] is True and out["spec"]["path"].endswith("hwspecs/a100-80gb-pcie.yaml")
    cells = [c for title, rows in out.items() if title != "spec" for row in rows for c in row["cells"]]
    assert sum(c["match"] is False for c in cells) == len(INCONSISTENT)  # the paper's values, as without the override
    assert any("uses the bundled spec" in l and str(tmp_path) in l for l in stderr_lines(r))
    text = run_cli("reproduce-paper", env={"TCADVISOR_HWSPEC_PATH": str(tmp_path)})
    assert "bundled NVIDIA A100 80GB PCIe spec" in text.stdout.splitlines()[0]
    assert "hwspecs/a100-80gb-pcie.yaml" in text.stdout.splitlines()[0]


def test_broken_override_of_a_bundled_key(run_cli, tmp_path):
    (tmp_path / "h100-sxm.yaml").write_text(GOOD.replace("value: 1000", "value: 1e300"))
    env = {"TCADVISOR_HWSPEC_PATH": str(tmp_path)}
    r = run_cli("advise", "Box-2D1R", "--gpu", "h100", env=env)  # the bundled alias now names the user's file
    assert r.returncode == 2 and len(stderr_lines(r)) == 1
    assert "h100-sxm.yaml" in r.stderr and "write 1.0e+300" in r.stderr
    r = run_cli("advise", "Box-2D1R", "--fuse", "1", "--gpu", "a100", env=env)
    assert r.returncode == 0 and "skipping" in r.stderr


def test_two_files_of_one_key_in_one_directory(run_cli, tmp_path):
    (tmp_path / "twin.yaml").write_text(GOOD)
    (tmp_path / "twin.yml").write_text(GOOD)
    env = {"TCADVISOR_HWSPEC_PATH": str(tmp_path)}
    assert run_cli("gpus", env=env).returncode == 0
    r = run_cli("advise", "Box-2D1R", "--gpu", "twin", env=env)
    assert r.returncode == 2 and "two files" in r.stderr and len(stderr_lines(r)) == 1


def test_directory_as_gpu(run_cli, tmp_path):
    for arg in (str(tmp_path), str(tmp_path) + "/"):
        r = run_cli("advise", "Box-2D1R", "--gpu", arg)
        assert r.returncode == 2 and "is a directory" in r.stderr and len(stderr_lines(r)) == 1


def test_missing_spec_directory_is_a_warning(run_cli, tmp_path):
    r = run_cli("gpus", env={"TCADVISOR_HWSPEC_PATH": str(tmp_path / "nowhere")})
    assert r.returncode == 0 and "nowhere" in r.stderr and "ignored" in r.stderr


def test_gpus_shows_per_instruction_rates(run_cli):
    r = run_cli("gpus")
    assert r.returncode == 0
    measured = [l for l in r.stdout.splitlines() if l.startswith("h100-sxm-measured") and "TC fp64" in l]
    assert len(measured) == 1 and "m8n8k4 33.2" in measured[0] and "m16n8k8 66.5," in measured[0]
    gpus = {g["key"]: g for g in json.loads(run_cli("gpus", "--json").stdout)}
    fp64 = {i["shape"]: i for i in gpus["h100-sxm-measured"]["instructions"]["tensor_core"]["fp64"]}
    assert fp64["m8n8k4"]["tflops"] == 33.2 and fp64["m8n8k4"]["own"] is True
    assert fp64["m16n8k16"]["own"] is False and fp64["m16n8k16"]["tflops"] == 66.5
    a100 = gpus["a100-80gb-pcie"]["instructions"]["tensor_core"]["fp64"]
    assert a100 == [{"shape": "m8n8k4", "tflops": 19.5, "own": False, "source": a100[0]["source"]}]


def test_warnings_are_said_once_per_process(tmp_path, monkeypatch, capsys):
    (tmp_path / "broken.yaml").write_text("peak: 1\n")
    monkeypatch.setenv("TCADVISOR_HWSPEC_PATH", str(tmp_path))
    catalog()
    find_spec("h100")
    catalog()
    err = capsys.readouterr().err
    assert err.count("broken.yaml") == 1
    with pytest.raises(TcAdvisorError, match="broken.yaml: field 'name'"):
        find_spec("broken")


def test_user_alias_wins_with_a_note_and_the_key_still_selects_the_bundled(tmp_path, monkeypatch, capsys):
    (tmp_path / "mine.yaml").write_text(GOOD.replace("name: Test GPU", "name: Mine\naliases: [h100]"))
    monkeypatch.setenv("TCADVISOR_HWSPEC_PATH", str(tmp_path))
    assert find_spec("h100").key == "mine"
    assert find_spec("h100-sxm").key == "h100-sxm"
    assert "'h100' names both h100-sxm and mine" in capsys.readouterr().err


def test_user_spec_wins_a_device_name_tie(tmp_path, monkeypatch):
    (tmp_path / "calibrated.yaml").write_text(GOOD.replace("name: Test GPU", 'name: Mine\ndevice_names: ["H100 80GB HBM3"]'))
    monkeypatch.setenv("TCADVISOR_HWSPEC_PATH", str(tmp_path))
    assert spec_for_device_name("NVIDIA H100 80GB HBM3").key == "calibrated"
    assert spec_for_device_name("NVIDIA H100 PCIe").key == "h100-pcie"


def test_default_follows_its_key(tmp_path, monkeypatch):
    """The default is the A100 key: a user file of that key is used, and if it is broken that is the error."""
    monkeypatch.setattr("tcadvisor.hardware.detect_local_gpu_name", lambda: None)
    monkeypatch.setenv("TCADVISOR_HWSPEC_PATH", str(tmp_path))
    (tmp_path / "a100-80gb-pcie.yaml").write_text(BUNDLED_A100.replace("value: 1935", "value: 1000"))
    r = resolve_gpu(None)
    assert r.spec.bandwidth.value == 1000e9 and r.spec.default and str(tmp_path) in r.note
    (tmp_path / "a100-80gb-pcie.yaml").write_text("name: [\n")
    other = tmp_path / "sub"
    other.mkdir()
    monkeypatch.setenv("TCADVISOR_HWSPEC_PATH", f"{other}:{tmp_path}")  # a new catalogue
    with pytest.raises(TcAdvisorError, match="a100-80gb-pcie.yaml: not valid YAML"):
        resolve_gpu(None)


def test_bundled_spec_ignores_user_directories(tmp_path, monkeypatch):
    from tcadvisor.hardware import bundled_spec
    (tmp_path / "a100-80gb-pcie.yaml").write_text(BUNDLED_A100.replace("value: 1935", "value: 1000"))
    monkeypatch.setenv("TCADVISOR_HWSPEC_PATH", str(tmp_path))
    assert find_spec("a100").bandwidth.value == 1000e9
    assert bundled_spec("a100-80gb-pcie").bandwidth.value == 1935e9 and bundled_spec("a100-80gb-pcie").bundled


def test_as_spec_accepts_names_and_refuses_other_objects(tmp_path):
    from tcadvisor.hardware import as_spec
    h100 = find_spec("h100")
    assert as_spec(h100) is h100 and as_spec("H100").key == "h100-sxm"
    f = tmp_path / "mine.yaml"
    f.write_text(GOOD)
    assert as_spec(f).name == "Test GPU"
    for bad in (3, None, ["h100"]):
        with pytest.raises(TcAdvisorError, match="is neither a GPU spec"):
            as_spec(bad)
