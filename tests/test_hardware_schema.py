"""Spec files: schema 2 (rates per MMA instruction), the instruction-peak API, and one-line errors."""
import re
import textwrap
from pathlib import Path

import pytest
import yaml

from tcadvisor.errors import TcAdvisorError
from tcadvisor.hardware import catalog, find_spec, load_spec_file
from tcadvisor.mma import MmaShape

ROOT = Path(__file__).resolve().parent.parent

SCHEMA2 = textwrap.dedent("""\
    schema: 2
    name: Test GPU 2
    sources: {ds: "Test datasheet, table 1", bench: "my microbenchmark, 2026-01-01"}
    bandwidth: {value: 2, unit: TB/s, source: ds}
    peak:
      cuda_core:
        fp64: {value: 30, source: ds}
      tensor_core:
        fp64:
          value: 60
          source: ds
          instructions:
            m16n8k8: {value: 60, source: bench}
            m8n8k4: {value: 30, source: bench}
            m16n8k16: {source: ds}
            m16n8k4: {}
        tf32: {value: 300, source: ds}
""")


def write(tmp_path, text, name="gpu.yaml"):
    f = tmp_path / name
    f.write_text(text)
    return f


def test_schema2_instruction_rates(tmp_path):
    spec = load_spec_file(write(tmp_path, SCHEMA2))
    assert spec.schema == 2
    assert spec.peak("tensor_core", "fp64") == 60e12  # the precision's rate is kept
    assert [str(s) for s in spec.shapes("tensor_core", "fp64")] == ["m16n8k8", "m8n8k4", "m16n8k16", "m16n8k4"]
    own = spec.instruction_peak("tensor_core", "fp64", "m8n8k4")
    assert own.value == 30e12 and not own.inherited and own.source == "my microbenchmark, 2026-01-01"
    assert spec.instruction_peak("tensor_core", "fp64", MmaShape(16, 8, 8)).value == 60e12
    for listed in ("m16n8k16", "m16n8k4"):  # listed without a rate of its own: the precision's, marked as such
        rate = spec.instruction_peak("tensor_core", "fp64", listed)
        assert rate.value == 60e12 and rate.inherited
        assert "no rate of its own" in rate.source and "Test datasheet" in rate.source
    assert "listed per Test datasheet" in spec.instruction_peak("tensor_core", "fp64", "m16n8k16").source
    assert spec.instruction_peak("tensor_core", "fp64", "m8n8k8") is None  # not listed: not executed
    assert spec.shapes("tensor_core", "tf32") == ()  # a precision without instructions lists no shapes
    assert spec.instruction_peak("tensor_core", "tf32", "m16n8k8") is None
    assert spec.instruction_peak("sparse_tensor_core", "fp16", "m16n8k32") is None
    assert spec.ridge("tensor_core", "fp64") == 60e12 / 2e12


def test_schema1_shapes_inherit_the_precision_rate():
    a100 = find_spec("a100")
    assert a100.schema == 1 and a100.instruction_rates == {}
    rate = a100.instruction_peak("tensor_core", "fp64", "m8n8k4")
    assert rate.value == a100.peak("tensor_core", "fp64") and rate.inherited
    assert a100.instruction_peak("tensor_core", "fp64", "m16n8k8") is None  # Ampere has no FP64 m16n8k8


def edit(old, new):
    return lambda t: t.replace(old, new, 1)


SCHEMA2_ERRORS = [
    (edit("schema: 2", "schema: 3"), "'schema'", "unknown schema 3"),
    (edit("schema: 2", "schema: two"), "'schema'", "reads schema 1 and 2"),
    (edit("schema: 2", "schema: true"), "'schema'", "unknown schema"),
    (edit("schema: 2\n", ""), "peak.tensor_core.fp64.instructions", "schema: 2"),
    (edit("schema: 2\n", "schema: 2\nmma_shapes: {source: ds, tensor_core: {fp64: [m8n8k4]}}\n"),
     "'mma_shapes'", "instructions"),
    (edit("schema: 2\n", "schema: 2\npeaks: {}\n"), "(top level).peaks", "unknown key"),
    (edit("m16n8k8: {value: 60", "m16n8: {value: 60"), "instructions.m16n8", "mMnNkK"),
    (edit("m16n8k4: {}", "M16N8K8: {}"), "instructions.M16N8K8", "listed twice"),
    (edit("m8n8k4: {value: 30", "m8n8k4: {value: 70"), "instructions.m8n8k4.value", "exceeds"),
    (edit("m8n8k4: {value: 30, source: bench}", "m8n8k4: {value: 30}"), "instructions.m8n8k4.source", "source"),
    (edit("m8n8k4: {value: 30, source: bench}", "m8n8k4: {vale: 30, source: bench}"),
     "instructions.m8n8k4.vale", "unknown key"),
    (edit("m8n8k4: {value: 30, source: bench}", "m8n8k4: 30"), "instructions.m8n8k4", "expected"),
    (edit("m8n8k4: {value: 30, source: bench}", "m8n8k4: {value: -30, source: bench}"),
     "instructions.m8n8k4.value", "positive"),
    (edit("instructions:", "instrucions:"), "peak.tensor_core.fp64.instrucions", "unknown key"),
    (edit("    fp64: {value: 30, source: ds}", "    fp64: {value: 30, source: ds, instructions: {m8n8k4: {}}}"),
     "peak.cuda_core.fp64.instructions", "only under"),
    (edit("unit: TB/s, ", ""), "bandwidth.unit", "missing"),
]


@pytest.mark.parametrize("change, field, needle", SCHEMA2_ERRORS)
def test_schema2_errors_are_one_line(tmp_path, change, field, needle):
    assert change(SCHEMA2) != SCHEMA2
    f = write(tmp_path, change(SCHEMA2))
    with pytest.raises(TcAdvisorError) as err:
        load_spec_file(f)
    msg = str(err.value)
    assert str(f) in msg and field in msg, msg
    assert needle in msg and "\n" not in msg, msg


@pytest.mark.parametrize("value, needle", [
    ("1e300", "write 1.0e+300"),          # YAML 1.1 reads these as text
    ("1.0e300", "write 1.0e+300"),
    ("2.5e3", "write 2.5e+3"),
    ('"900"', "without quotes"),
    (".inf", "finite number, got .inf"),
    ("-.inf", "finite number, got -.inf"),
    (".nan", "not a number"),
    ("0", "got 0"),
    ("-5", "got -5"),
    ("true", "the boolean true"),
    ("no", "the boolean false"),
    ("fast", "the text 'fast'"),
    ("[1, 2]", "got [1, 2]"),
    ("1" + "0" * 400, "too large"),     # an integer beyond any float
    ("1.0e+307", "too large"),          # a float, but not once held in FLOP/s
])
def test_bad_numbers_say_what_is_wrong(tmp_path, value, needle):
    text = SCHEMA2.replace("fp64: {value: 30, source: ds}", f"fp64: {{value: {value}, source: ds}}")
    assert text != SCHEMA2
    f = write(tmp_path, text)
    with pytest.raises(TcAdvisorError) as err:
        load_spec_file(f)
    msg = str(err.value)
    assert "peak.cuda_core.fp64.value" in msg and needle in msg and "\n" not in msg, msg


def test_suggested_spelling_reads_as_the_number(tmp_path):
    """The spelling the error suggests is what YAML 1.1 reads as that number."""
    for text in ("1e300", "1.0e300", "7E-3", "2.5e3"):
        with pytest.raises(TcAdvisorError) as err:
            load_spec_file(write(tmp_path, SCHEMA2.replace("value: 2, unit", f"value: {text}, unit")))
        suggested = re.search(r"write (\S+)$", str(err.value)).group(1)
        assert yaml.safe_load(suggested) == float(text)


def test_bandwidth_must_be_a_mapping(tmp_path):
    f = write(tmp_path, SCHEMA2.replace("bandwidth: {value: 2, unit: TB/s, source: ds}", "bandwidth: 5"))
    with pytest.raises(TcAdvisorError, match="bandwidth must be a mapping with value and unit"):
        load_spec_file(f)


@pytest.mark.parametrize("setup, needle", [
    (lambda p: p.mkdir(), "is a directory"),
    (lambda p: None, "does not exist"),
    (lambda p: p.write_bytes(b"name: GPU \xff\xfe\n"), "not UTF-8 text (byte 0xff at offset 10)"),
    (lambda p: p.write_text(""), "the file is empty"),
    (lambda p: p.write_text("- a\n- b\n"), "expected a YAML mapping"),
    (lambda p: p.write_text("name: [unclosed\n"), "not valid YAML at line 2"),
    (lambda p: p.write_text("name: x\n" + "#" * (1 << 20)), "too large: more than 1 MiB"),
])
def test_unreadable_files_are_one_line(tmp_path, setup, needle):
    path = tmp_path / "gpu.yaml"
    setup(path)
    with pytest.raises(TcAdvisorError) as err:
        find_spec(str(path))
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_unreadable_file(tmp_path, monkeypatch):
    path = write(tmp_path, SCHEMA2)

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr("tcadvisor.files.os.open", refuse)
    with pytest.raises(TcAdvisorError, match=r"cannot be read \(Permission denied\)$"):
        load_spec_file(path)


def test_documented_calibrated_example_loads(tmp_path):
    """The calibrated spec shown in docs/hwspec-format.md is a valid schema-2 file."""
    doc = (ROOT / "docs" / "hwspec-format.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", doc, re.S)
    full = [b for b in blocks if b.startswith("schema: 2\nname:")]
    assert len(full) == 1
    spec = load_spec_file(write(tmp_path, full[0], "calibrated.yaml"))
    rate = spec.instruction_peak("tensor_core", "fp64", "m8n8k4")
    assert rate.value == 33.2e12 and not rate.inherited and "tcadvisor calibrate" in rate.source


# --------------------------------------------------------------------------- the bundled per-shape rates

def test_measured_h100_rates_are_the_projects_measurements():
    """Figures measured on the project's H100 SXM with microbenchmarks (typed here from the measurement
    record, independently of the spec file): TFLOP/s per instruction, TB/s copy bandwidth."""
    spec = find_spec("h100-measured")
    tc = lambda unit, precision, shape: spec.instruction_peak(unit, precision, shape)  # noqa: E731
    measured = [("tensor_core", "fp64", "m8n8k4", 33.2), ("tensor_core", "fp64", "m16n8k8", 66.5),
                ("tensor_core", "tf32", "m16n8k8", 326), ("tensor_core", "fp16", "m16n8k16", 662),
                ("sparse_tensor_core", "fp16", "m16n8k32", 919), ("sparse_tensor_core", "tf32", "m16n8k16", 459)]
    for unit, precision, shape, tflops in measured:
        rate = tc(unit, precision, shape)
        assert rate.value == pytest.approx(tflops * 1e12, rel=1e-12) and not rate.inherited, (unit, precision, shape)
        assert "measured" in rate.source
    # m16n8k16 is of m16n8k8's family but was not measured itself: listed, inheriting the FP64 rate
    k16 = tc("tensor_core", "fp64", "m16n8k16")
    assert k16.inherited and k16.value == 66.5e12 and "not measured" in k16.source
    assert tc("tensor_core", "fp64", "m16n8k4") is None  # not measured, not listed
    assert spec.peak("cuda_core", "fp64") == 30.6e12 and spec.peak("cuda_core", "fp32") == 65.9e12
    assert spec.bandwidth.value == 3.02e12
    # the precision's rate is its fastest instruction's
    for unit, per in spec.mma_shapes.items():
        for precision, shapes in per.items():
            assert max(tc(unit, precision, s).value for s in shapes) == spec.peak(unit, precision)


@pytest.mark.parametrize("key, fp64_tc", [("h100-sxm", 67), ("h100-pcie", 51), ("h200-sxm", 67)])
def test_datasheet_hoppers_give_m8n8k4_half_the_fp64_rate(key, fp64_tc):
    spec = find_spec(key)
    assert spec.peak("tensor_core", "fp64") == fp64_tc * 1e12  # the datasheet's FP64 Tensor Core figure
    half = spec.instruction_peak("tensor_core", "fp64", "m8n8k4")
    assert not half.inherited and half.value == fp64_tc / 2 * 1e12
    assert abs(half.value / spec.peak("tensor_core", "fp64") - 33.2 / 66.5) < 0.01  # the measured ratio
    assert "measured" in half.source and "33.2" in half.source and "no rate per instruction" in half.source
    for shape in ("m16n8k8", "m16n8k16", "m16n8k4"):
        rate = spec.instruction_peak("tensor_core", "fp64", shape)
        assert rate.inherited and rate.value == fp64_tc * 1e12
    if key != "h100-sxm":  # the SXM card is the one that was measured
        assert "not measured" in half.source or "was not measured" in half.source


@pytest.mark.parametrize("key", ["mi250x", "mi300x"])
def test_amd_specs_list_only_mfma_shapes(key):
    spec = find_spec(key)
    shapes = [s for per in spec.mma_shapes.values() for listed in per.values() for s in listed]
    assert shapes and all(s.m == s.n and s.m in (16, 32) for s in shapes)  # MFMA blocks are 16x16 or 32x32
    assert spec.shapes("tensor_core", "fp64") == (MmaShape(16, 16, 4),)  # v_mfma_f64_16x16x4f64


@pytest.mark.parametrize("key", sorted(catalog()))
def test_every_listed_instruction_is_cited(key):
    spec = catalog()[key]
    raw = yaml.safe_load(spec.path.read_text())
    for unit, per in raw["peak"].items():
        for precision, entry in per.items():
            for shape, inst in (entry.get("instructions") or {}).items():
                assert isinstance(inst, dict) and inst.get("source"), (key, unit, precision, shape)
    for unit, per in spec.mma_shapes.items():
        for precision, shapes in per.items():
            for shape in shapes:
                assert spec.instruction_peak(unit, precision, shape).source.strip()


# --------------------------------------------------------------------------- the multiprocessors section

SMS = textwrap.dedent("""\
    multiprocessors:
      count: 132
      clock_ghz: 1.98
      shared_memory_kib: 228
      shared_memory_per_block_kib: 227
      shared_memory_reserved_kib: 1
      registers: 65536
      max_warps: 64
      max_blocks: 32
      source: ds
""")


def test_multiprocessors_section_is_read_in_si_units(tmp_path):
    sm = load_spec_file(write(tmp_path, SCHEMA2 + SMS)).multiprocessors
    assert (sm.count, sm.clock, sm.shared_memory, sm.shared_memory_per_block, sm.shared_memory_reserved) == (
        132, 1.98e9, 228 * 1024, 227 * 1024, 1024)
    assert (sm.registers, sm.max_warps, sm.max_blocks, sm.source) == (65536, 64, 32, "Test datasheet, table 1")
    assert load_spec_file(write(tmp_path, SCHEMA2, "plain.yaml")).multiprocessors is None
    zero = SMS.replace("shared_memory_reserved_kib: 1", "shared_memory_reserved_kib: 0")
    assert load_spec_file(write(tmp_path, SCHEMA2 + zero, "volta.yaml")).multiprocessors.shared_memory_reserved == 0


@pytest.mark.parametrize("change, field", [
    (("count: 132", "count: 13.2"), "multiprocessors.count"),
    (("clock_ghz: 1.98", "clock_ghz: -1"), "multiprocessors.clock_ghz"),
    (("  max_blocks: 32\n", ""), "multiprocessors.max_blocks"),
    (("shared_memory_per_block_kib: 227", "shared_memory_per_block_kib: 300"),
     "multiprocessors.shared_memory_per_block_kib"),
    (("source: ds", "source: ds\n  warp_size: 32"), "multiprocessors.warp_size"),
    (("  source: ds\n", ""), "multiprocessors.source"),
])
def test_multiprocessors_errors_are_one_line(tmp_path, change, field):
    with pytest.raises(TcAdvisorError) as info:
        load_spec_file(write(tmp_path, SCHEMA2 + SMS.replace(*change)))
    assert f"'{field}'" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("key", ["h100-sxm", "h100-pcie", "h200-sxm", "a100-sxm", "a100-pcie", "l40s", "rtx4090",
                                 "v100", "h100-calibrated", "h200-calibrated"])
def test_nvidia_specs_give_their_multiprocessors_with_a_source(key):
    spec = find_spec(key)
    sm = spec.multiprocessors
    assert sm is not None and "Technical Specifications per Compute Capability" in sm.source
    # the clock is the one the spec's FP32 rate implies: 128 FP32 FMA per clock per SM (64 on Volta and Ampere GA100)
    lanes = 64 if "sm_70" in spec.architecture or "sm_80" in spec.architecture else 128
    implied = spec.peak("cuda_core", "fp32") / (2 * lanes * sm.count)
    assert implied == pytest.approx(sm.clock, rel=0.05)


# --------------------------------------------------------------------------- compute capability


def test_compute_capability_is_read_with_its_source(tmp_path):
    spec = load_spec_file(write(tmp_path, SCHEMA2 + 'compute_capability: {value: "8.6", source: ds}\n'))
    assert spec.compute_capability == (8, 6) and spec.compute_capability_source == "Test datasheet, table 1"
    assert load_spec_file(write(tmp_path, SCHEMA2, "plain.yaml")).compute_capability is None


@pytest.mark.parametrize("entry, needle", [
    ('{value: 8.0, source: ds}', "quoted major.minor"),
    ('{value: "8", source: ds}', "major.minor"),
    ('{value: "sm_80", source: ds}', "major.minor"),
    ('{value: "8.0"}', "compute_capability.source"),
    ('{value: "8.0", source: ds, arch: x}', "compute_capability.arch"),
    ('"8.0"', "expected a mapping"),
])
def test_bad_compute_capability_is_one_line(tmp_path, entry, needle):
    with pytest.raises(TcAdvisorError, match=re.escape(needle)) as err:
        load_spec_file(write(tmp_path, SCHEMA2 + f"compute_capability: {entry}\n"))
    assert "compute_capability" in str(err.value) and "\n" not in str(err.value)


def test_every_bundled_nvidia_spec_gives_its_compute_capability():
    for spec in catalog().values():
        if spec.bundled and spec.vendor == "NVIDIA":
            assert spec.compute_capability is not None and spec.compute_capability_source, spec.key
