"""The wgmma benchmark without a GPU: the instruction text it writes (PTX ISA syntax), the spec section it fills."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from _validate_data import h100_like
from tcadvisor.errors import TcAdvisorError
from tcadvisor.hardware import parse_spec
from tcadvisor.mma import MmaShape
from tcadvisor.validate import calibrate as cal
from tcadvisor.validate.wgmma import WgmmaBenchmark, step_source, wgmma_benchmarks

ROOT = Path(__file__).resolve().parents[1]


def instruction(bench):
    return re.search(r'"(wgmma\.[^"]*);\\n"', step_source(bench)).group(1)


@pytest.mark.parametrize("precision, n, sparse, a_shared", [
    ("fp16", 8, False, False), ("bf16", 256, False, True), ("tf32", 64, False, False),
    ("fp16", 16, True, False), ("tf32", 8, True, True), ("bf16", 128, True, False)])
def test_the_instruction_names_every_accumulator_and_the_operands_of_its_form(precision, n, sparse, a_shared):
    b = WgmmaBenchmark(precision, n, sparse, a_shared)
    text = instruction(b)
    k = {"fp16": 16, "bf16": 16, "tf32": 8}[precision] * (2 if sparse else 1)
    ptx = {"fp16": "f16", "bf16": "bf16", "tf32": "tf32"}[precision]
    head = f"wgmma.mma_async{'.sp' if sparse else ''}.sync.aligned.m64n{n}k{k}.f32.{ptx}.{ptx} "
    assert text.startswith(head) and b.shape == MmaShape(64, n, k)
    groups = re.findall(r"\{([^}]*)\}", text)
    assert len(groups[0].split(",")) == n // 2 == b.accumulators  # 64 x N FP32 over 128 threads
    rest = [x.strip() for x in re.sub(r"\{[^}]*\}", "{}", text[len(head):]).split(",")]
    # d, a (four registers or a descriptor), b-desc, [sp-meta, sp-sel,] scale-d, imm-scale-a, imm-scale-b, imm-trans
    assert rest[0] == "{}" and (rest[1] == "{}") == (not a_shared)
    if not a_shared:
        assert len(groups[1].split(",")) == 4
    trans = 0 if precision == "tf32" else (2 if a_shared else 1)  # the PTX ISA: 16-bit types only, A's with A in smem
    assert len(rest) == 3 + (2 if sparse else 0) + 3 + trans
    assert rest[3 + (2 if sparse else 0)] == "p" and rest[-(2 + trans):] == ["1", "1"] + ["0"] * trans
    # every %n operand exists in the constraint lists, numbered in order
    src = step_source(b)
    used = {int(x) for x in re.findall(r"%(\d+)", src)}
    constraints = re.findall(r'"[+=]?[flr]"\(', src)
    assert used == set(range(len(constraints)))


def test_the_benchmark_refuses_what_wgmma_has_not():
    with pytest.raises(TcAdvisorError, match="fp64"):
        WgmmaBenchmark("fp64", 8)
    with pytest.raises(TcAdvisorError, match="multiple of 8"):
        WgmmaBenchmark("fp16", 12)
    assert wgmma_benchmarks((8, 0)) == () and wgmma_benchmarks((10, 0)) == ()  # sm_90a only
    full, quick = wgmma_benchmarks((9, 0)), wgmma_benchmarks((9, 0), quick=True)
    assert {b.n for b in full} == {8, 256} and {b.n for b in quick} == {8}
    assert {(b.unit, b.precision) for b in quick} == {(u, p) for u in ("tensor_core", "sparse_tensor_core")
                                                       for p in ("tf32", "fp16", "bf16")}
    assert WgmmaBenchmark("fp16", 8, True).flops_per_instruction == 2 * 64 * 8 * 32  # dense-equivalent


def with_wgmma():
    c = h100_like()
    c.wgmma[("tensor_core", "fp16", "m64n8k16")] = cal.Measured("k", "FP16 wgmma m64n8k16", 290e12, [1.0], 1.0,
                                                                  "wgmma, 264 blocks")
    c.wgmma[("sparse_tensor_core", "fp16", "m64n8k32")] = cal.Measured("k", "FP16 wgmma.sp m64n8k32", 460e12,
                                                                         [1.0], 1.0, "wgmma.sp, 264 blocks")
    c.wgmma[("tensor_core", "fp16", "m64n256k16")] = cal.Measured("k", "FP16 wgmma m64n256k16", 930e12, [1.0], 1.0)
    return c


def test_calibrate_writes_wgmma_apart_from_the_peaks(tmp_path):
    c = with_wgmma()
    raw = yaml.safe_load(cal.spec_text(c))
    assert raw["warpgroup_mma"]["tensor_core"]["fp16"] == {"m64n8k16": {"value": 290, "source": "measured"},
                                                           "m64n256k16": {"value": 930, "source": "measured"}}
    # the executed instruction's rate stays mma's: wgmma's faster large-N rate moves no peak
    assert raw["peak"]["tensor_core"]["fp16"]["value"] == yaml.safe_load(cal.spec_text(h100_like()))["peak"][
        "tensor_core"]["fp16"]["value"]
    spec = parse_spec(raw, tmp_path / "h100-calibrated.yaml")
    rates = spec.warpgroup_rates["tensor_core"]["fp16"]
    assert rates[MmaShape(64, 8, 16)].value == pytest.approx(290e12) and rates[MmaShape(64, 8, 16)].source
    assert spec.peak("tensor_core", "fp16") < 930e12
    text = cal.spec_text(c)
    assert "# FP16 wgmma m64n8k16: 290 TFLOP/s (wgmma, 264 blocks)" in text
    assert "no bundled kernel issues it" in text


@pytest.mark.parametrize("section, message", [
    ({"tensor_core": {"fp16": {"m16n8k16": {"value": 1, "source": "measured"}}}}, "M = 64"),
    ({"cuda_core": {"fp16": {"m64n8k16": {"value": 1, "source": "measured"}}}}, "tensor_core or sparse"),
    ({"tensor_core": {"fp8": {"m64n8k16": {"value": 1, "source": "measured"}}}}, "unknown precision"),
    ({"tensor_core": {"fp16": {"m64n8k16": 3}}}, "expected {value, source}"),
    ({"tensor_core": {"fp16": {"m64n8k16": {"value": -1, "source": "measured"}}}}, "value"),
    ({"tensor_core": {"fp16": {"m64n8k16": {"value": 1}}}}, "source"),
    ({"sparse_tensor_core": {"fp64": {"m64n8k16": {"value": 1, "source": "measured"}}}}, "precision"),
    ([], "expected a mapping"),
])
def test_a_bad_warpgroup_section_is_one_line_naming_it(tmp_path, section, message):
    raw = yaml.safe_load(cal.spec_text(h100_like()))
    raw["warpgroup_mma"] = section
    with pytest.raises(TcAdvisorError, match="warpgroup_mma") as err:
        parse_spec(raw, tmp_path / "x.yaml")
    assert message in str(err.value) and "\n" not in str(err.value)


def test_the_bundled_calibrated_specs_carry_measured_wgmma_rates_below_mma_at_n8():
    """What the project measured (hwspecs/*-calibrated.yaml, from validation/results/*/wgmma): at the stencil
    kernels' N = 8, wgmma delivers less than the mma.sync/mma.sp shape the kernels issue."""
    from tcadvisor.hardware import resolve_gpu

    checked = 0
    for name in ("h200-calibrated", "h100-calibrated"):
        spec = resolve_gpu(name).spec
        for unit, per in spec.warpgroup_rates.items():
            for precision, shapes in per.items():
                n8 = next(r for s, r in shapes.items() if s.n == 8)
                assert n8.value < spec.peak(unit, precision), (name, unit, precision)
                assert max(r.value for r in shapes.values()) > 2 * n8.value
                checked += 1
    assert checked >= 6


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc to compile-check the wgmma benchmark")
@pytest.mark.parametrize("bench", [WgmmaBenchmark("fp16", 8), WgmmaBenchmark("tf32", 16, True, True),
                                   WgmmaBenchmark("bf16", 256)])
def test_the_wgmma_benchmark_compiles_for_sm90a(tmp_path, bench):
    src = tmp_path / "k.cu"
    src.write_text(step_source(bench) + (ROOT / "kernels" / "calibrate_wgmma.cu").read_text())
    chains = 1 if bench.n > 64 else 2
    proc = subprocess.run(["nvcc", "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a", "-cubin", "-o",
                           str(tmp_path / "k.cubin"), f"-DCAL_CHAINS={chains}", "-DCAL_UNROLL=4",
                           "-DCAL_WG=2", "-DCAL_WAIT=1", "-Xptxas", "-v", str(src)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "C7511" not in proc.stderr and "spill" not in proc.stderr.split("cal_wgmma")[-1].replace(
        "0 bytes spill", "")  # not serialised, no spills
