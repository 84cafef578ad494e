"""Calibration without a GPU: the instruction table, the CUDA source, nvidia-smi parsing, the spec file."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tcadvisor.hardware import UNITS, catalog, parse_spec
from tcadvisor.impls import catalog as impl_catalog
from tcadvisor.mma import MmaShape
from tcadvisor.validate import calibrate as cal
from _validate_data import h100_like
from tcadvisor.validate.instructions import (FMA_BENCHMARKS, MMA_BENCHMARKS, find_mma, flops_per_instruction,
                                             mma_benchmarks)

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "kernels" / "calibrate.cu"


def test_every_shape_of_profiles_and_ampere_hopper_specs_is_calibrated():
    """Each MMA shape an implementation profile lists, or a bundled Ampere/Hopper spec, has a benchmark."""
    wanted = set()
    for prof in impl_catalog().values():
        for precision, shapes in prof.mma.items():
            wanted |= {(prof.unit, precision, s) for s in shapes}
    for spec in catalog().values():
        if re.search(r"sm_(80|86|90)", spec.architecture):
            for unit, per in spec.mma_shapes.items():
                wanted |= {(unit, p, s) for p, shapes in per.items() for s in shapes}
    assert ("tensor_core", "fp64", MmaShape(16, 8, 16)) in wanted and len(wanted) > 10
    missing = {w for w in wanted if find_mma(*w) is None}
    assert not missing, f"no calibration benchmark for {sorted(missing)}"


def test_instruction_table_matches_the_cuda_source():
    """The CAL_MMA table in kernels/calibrate.cu's header names the same instructions as Python's."""
    text = SOURCE.read_text()
    table = dict(re.findall(r"(\d+) ((?:sparse )?(?:f64|tf32|f16|bf16) m\d+n\d+k\d+)", text.split("CAL_MMA:")[1]))
    names = {"f64": "fp64", "tf32": "tf32", "f16": "fp16", "bf16": "bf16"}
    assert len(table) == len(MMA_BENCHMARKS) == len({b.code for b in MMA_BENCHMARKS})
    for b in MMA_BENCHMARKS:
        words = table[str(b.code)].split()
        assert (words[0] == "sparse") == b.sparse
        assert names[words[-2]] == b.precision and MmaShape.parse(words[-1]) == b.shape
        assert f"CAL_MMA == {b.code}" in text
    assert sorted(b.code for b in FMA_BENCHMARKS) == [1, 2, 3, 4]


def test_flops_per_instruction_and_architecture_filter():
    assert flops_per_instruction("m16n8k16") == 4096 and flops_per_instruction(MmaShape(8, 8, 4)) == 512
    assert find_mma("sparse_tensor_core", "fp16", "m16n8k32").flops_per_instruction == 8192  # dense-equivalent
    ampere = mma_benchmarks((8, 0))
    assert not any(b.precision == "fp64" and b.shape.m == 16 for b in ampere)  # FP64 m16n8k* need sm_90
    assert len(mma_benchmarks((9, 0))) == len(MMA_BENCHMARKS)
    quick = mma_benchmarks((9, 0), quick=True)
    assert {(b.unit, b.precision) for b in quick} == {(b.unit, b.precision) for b in MMA_BENCHMARKS}
    assert len(quick) < len(MMA_BENCHMARKS)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc to compile-check kernels/calibrate.cu")
@pytest.mark.parametrize("arch, defines, ok", [
    ("sm_90", [], True),
    ("sm_90", ["-DCAL_FMA=1", "-DCAL_CHAINS=8"], True),
    ("sm_80", ["-DCAL_FMA=4"], True),
    ("sm_90", ["-DCAL_MMA=4"], True),
    ("sm_80", ["-DCAL_MMA=1"], True),
    ("sm_80", ["-DCAL_MMA=3"], False),  # FP64 m16n8k8 is an sm_90 instruction: min_cc says so too
    ("sm_90", ["-DCAL_MMA=12", "-DCAL_ORDERED=1"], True),
    ("sm_80", ["-DCAL_MMA=16", "-DCAL_ORDERED=0"], True),
])
def test_calibrate_cu_compiles(tmp_path, arch, defines, ok):
    proc = subprocess.run(["nvcc", f"-arch={arch}", "-cubin", "-o", str(tmp_path / "k.cubin"), *defines, str(SOURCE)],
                          capture_output=True, text=True, timeout=300)
    assert (proc.returncode == 0) == ok, proc.stderr[-2000:]
    if not ok:
        code = int(defines[0].split("=")[1])
        assert next(b for b in MMA_BENCHMARKS if b.code == code).min_cc > (8, 0)


def test_nvidia_smi_parsing():
    text = ("NVIDIA H100 80GB HBM3, 00000000:18:00.0, 550.54.15, 1980, 2619, 1980, 2619\n"
            "NVIDIA H100 80GB HBM3, 00000000:2A:00.0, 550.54.15, 1980, 2619, 345, 2619\n")
    row = cal.parse_smi_query(text, "0000:2a:00.0")
    assert row["clocks.sm"] == 345 and row["clocks.max.sm"] == 1980 and row["driver_version"] == "550.54.15"
    assert cal.parse_smi_query(text, None)["pci.bus_id"] == "00000000:18:00.0"
    assert cal.parse_smi_query(text, "0000:99:00.0") is None
    assert cal.parse_smi_query("NVIDIA X, 0:1:0.0, 1, [N/A], 100, 5, 6\n")["clocks.max.sm"] is None
    assert cal.parse_clock_sample("1980, 2619\n") == (1980.0, 2619.0)
    assert cal.parse_clock_sample("clocks.current.sm [MHz], clocks.current.memory [MHz]") is None


def test_clock_window_is_the_median_inside_it():
    s = cal.ClockSampler.__new__(cal.ClockSampler)
    s.samples = [(0.0, 345, 2619), (1.0, 1980, 2619), (1.5, 1755, 2619), (2.0, 1980, 2619), (5.0, 345, 2619)]
    assert s.window(0.9, 2.1) == 1980 and s.window(0.9, 1.6) == pytest.approx((1980 + 1755) / 2)
    assert s.window(3, 4) is None


def test_iterations_scale_to_the_target_time():
    assert cal.scaled_iterations(1024, 0.001, 0.02) == 20480
    assert cal.scaled_iterations(1024, 0.5, 0.02) == 1024  # never fewer than the probe
    assert cal.scaled_iterations(100, 0.0001, 0.02) % cal.UNROLL == 0
    assert cal.scaled_iterations(1024, 0.0, 0.02) == 1024
    assert cal.rate(10.0, [1.0, 4.0, 2.0]) == 5.0


def test_spec_file_is_schema_2_with_per_instruction_peaks_and_loads_as_a_spec(tmp_path):
    c = h100_like()
    raw = yaml.safe_load(cal.spec_text(c))
    assert raw["schema"] == 2 and raw["device_names"] == [] and raw["aliases"] == ["h100-calibrated"]
    assert raw["name"] == "NVIDIA H100 80GB HBM3 (calibrated 2026-11-23)"
    assert raw["architecture"] == "Hopper (sm_90)"
    assert raw["bandwidth"] == {"value": 3.021, "unit": "TB/s", "source": "measured"}
    fp64 = raw["peak"]["tensor_core"]["fp64"]
    assert fp64["value"] == 66.5  # the fastest instruction of the precision
    assert list(fp64["instructions"]) == ["m16n8k8", "m8n8k4"]
    assert fp64["instructions"]["m8n8k4"] == {"value": 33.2, "source": "measured"}
    assert raw["peak"]["sparse_tensor_core"]["fp16"]["instructions"] == {"m16n8k32": {"value": 919, "source": "measured"}}
    src = raw["sources"]["measured"]
    assert "sm_90, 132 SMs" in src and "SM clock 1755-1980 MHz" in src and "memory clock 2619 MHz" in src
    assert "driver 550.54.15" in src
    spec = parse_spec(raw, tmp_path / "h100-calibrated.yaml")
    assert spec.bandwidth.value == pytest.approx(3.021e12)
    assert spec.peak("cuda_core", "fp64") == pytest.approx(30.6e12)
    assert spec.peak("sparse_tensor_core", "tf32") == pytest.approx(459e12)
    assert not spec.has("sparse_tensor_core", "fp64") and not spec.has("tensor_core", "bf16")
    assert set(spec.peaks) <= set(UNITS)


def test_spec_text_comments_say_how_each_number_was_measured():
    text = cal.spec_text(h100_like())
    comments = [ln for ln in text.splitlines() if ln.startswith("#")]
    assert any("bandwidth: copy" in ln for ln in comments)
    assert any("tensor_core/fp64/m8n8k4: 33.2 TFLOP/s" in ln for ln in comments)
    assert cal.tflops(66.54321e12) == 66.54


def test_each_benchmark_gets_the_clock_sampled_while_it_ran_or_just_after():
    s = cal.ClockSampler.__new__(cal.ClockSampler)
    s.samples = [(0.0, 345, 2619), (1.0, 1980, 2619), (1.1, 1965, 2619), (1.45, 1755, 2619)]
    a = cal.Measured("a", "a", 1.0, [1.0], 1.0, window=(0.95, 1.15))
    b = cal.Measured("b", "b", 1.0, [1.0], 1.0, window=(1.3, 1.35))  # between two samples: the next one
    c = cal.Measured("c", "c", 1.0, [1.0], 1.0, window=(3.0, 3.1))  # none near it
    cal.assign_clocks([a, b, c], s)
    assert a.sm_clock_mhz == (1980 + 1965) / 2 and b.sm_clock_mhz == 1755 and c.sm_clock_mhz is None


def test_spec_file_carries_the_multiprocessors_the_device_reports(tmp_path):
    """With the device's properties, calibrate writes the multiprocessors section the refined model needs; the
    clock is the one sampled while the rates were measured.  Without them, no section (nothing guessed)."""
    c = h100_like()
    assert "multiprocessors" not in yaml.safe_load(cal.spec_text(c))
    c.properties = {"smem_per_sm": 233472, "smem_optin": 232448, "smem_reserved": 1024, "regs_per_sm": 65536,
                    "max_threads_per_sm": 2048, "max_blocks_per_sm": 32, "clock_khz": 1980000}
    raw = yaml.safe_load(cal.spec_text(c))
    measured_clocks = [m.sm_clock_mhz for m in [*c.fma.values(), *c.mma.values()] if m.sm_clock_mhz]
    assert raw["multiprocessors"]["clock_ghz"] == pytest.approx(sorted(measured_clocks)[len(measured_clocks) // 2]
                                                                / 1000, rel=0.05)
    sm = parse_spec(raw, tmp_path / "h100-calibrated.yaml").multiprocessors
    assert (sm.count, sm.shared_memory, sm.shared_memory_per_block, sm.max_warps, sm.max_blocks) == (
        132, 233472, 232448, 64, 32)
