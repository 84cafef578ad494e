"""Hardware specs: every bundled file validates, every number has a source, bad files fail clearly."""
import textwrap

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
    # SPEC §3: the paper's hardware numbers
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
