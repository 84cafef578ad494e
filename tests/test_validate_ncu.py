"""Nsight Compute without a GPU: metric names, the command, the CSV layouts, and the profile pipeline
driven by a stand-in ncu that writes what the real one writes."""
import os
import stat
import sys

import pytest

from tcadvisor.errors import TcAdvisorError
from tcadvisor.stencil import parse_stencil
from tcadvisor.validate import ncu
from tcadvisor.validate.compare import derive
from tcadvisor.validate.records import Measurement
from tcadvisor.validate.runner import _profile_chunk, fill_profile
from tcadvisor.validate.suites import Config

from _validate_data import DATA, FAKE_NCU

POINTS = 10240 * 10240


def read(name):
    with open(os.path.join(DATA, name)) as f:
        return f.read()


def test_query_metrics_and_resolution():
    available = ncu.parse_query_metrics(read("query_metrics_h100.txt"))
    assert "dram__bytes_read" in available and "sm__inst_executed_pipe_tensor_op_dmma" in available
    assert "Metric" not in available and not any(" " in n for n in available)
    chosen = ncu.resolve(available)
    assert chosen["dfma"] == "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum"
    assert chosen["dmma_inst"] == "sm__inst_executed_pipe_tensor_op_dmma.sum"
    assert chosen["ops_fp16_sparse"] == "sm__ops_path_tensor_src_fp16_dst_fp32_sparsity_on.sum"
    assert "ops_tf32_sparse" not in chosen  # not offered by this device: not requested
    # without the device's list: only the quantities every recent GPU has, by their first name
    blind = ncu.resolve(None)
    assert set(blind) == set(ncu.ESSENTIAL) and not any(k.startswith("ops_") for k in blind)
    report = ncu.candidates_report(available)
    assert "ops_tf32_sparse" in report and "NOT AVAILABLE" in report
    assert "sm__ops_path_tensor_src_fp64" in report.split("related metrics")[1]


def test_raw_page_with_units_row_markers_and_separators():
    launches = ncu.parse_csv(read("ncu_raw.csv"))
    assert [k.id for k in launches] == list(range(8))
    cc = launches[1]
    assert cc.name == "cc_stream2d" and cc.grid == "(40, 22, 1)"
    assert cc.metrics["dram__bytes_read.sum"] == 857_034_752
    assert cc.metrics["gpu__time_duration.sum"] == pytest.approx(622_560e-9)  # nsecond -> s
    groups = ncu.assign_launches(launches)
    assert sorted(groups) == [0, 1, 2]  # configuration 3's marker is followed by nothing
    assert [k.name for k in groups[2]] == ["cc_stream2d", "cc_stream2d"]
    k, note = ncu.pick_launch(groups[2], "cc_stream2d")
    assert k.id == 5 and "2 launches" in note
    k, note = ncu.pick_launch(groups[1], "cc_stream(2|3)d")
    assert k is None and "tc_stream" in note


def test_details_page_scales_units():
    (marker, k) = ncu.parse_csv(read("ncu_details.csv"))
    assert marker.name == ncu.MARKER and marker.grid == "(5, 1, 1)"
    assert k.metrics["dram__bytes_read.sum"] == pytest.approx(869.01e6)
    assert k.metrics["sm__inst_executed_pipe_tensor_op_dmma.sum"] == 5_865_472
    assert k.metrics["gpu__time_duration.sum"] == pytest.approx(715.23e-6)


def test_values_and_units():
    assert ncu.parse_value("1,234,567") == 1234567 and ncu.parse_value("n/a") is None
    assert ncu.parse_value("2.5", "Gbyte") == 2.5e9
    with pytest.raises(TcAdvisorError, match="--print-units base"):
        ncu.parse_value("3", "furlong")
    with pytest.raises(TcAdvisorError, match="Kernel Name"):
        ncu.parse_csv('"a","b"\n"1","2"\n')
    assert ncu.parse_csv("==PROF== nothing profiled\n") == []


def test_measured_c_m_i_from_a_profile():
    launches = ncu.parse_csv(read("ncu_raw.csv"))
    metrics = ncu.resolve(ncu.parse_query_metrics(read("query_metrics_h100.txt")))
    cc = Measurement(unit="cuda_core", dtype="double", precision="fp64", points=POINTS, status="ok",
                     pred_flops_per_point=54, pred_bytes_per_point=16, pred_intensity=3.375)
    fill_profile(cc, launches[1], metrics)
    tc = Measurement(unit="tensor_core", dtype="double", precision="fp64", mma="m16n8k16", points=POINTS, status="ok",
                     pred_flops_per_point=224, pred_bytes_per_point=16, pred_intensity=14)
    fill_profile(tc, launches[3], metrics)
    for m in (cc, tc):
        derive(m)
    assert cc.meas_bytes_per_point == pytest.approx((857_034_752 + 850_395_136) / POINTS)
    assert cc.meas_flops_per_point == pytest.approx(2 * 2_936_012_800 / POINTS) == 56
    assert cc.err_flops == pytest.approx(56 / 54 - 1)
    # Tensor Cores: DMMA instructions x 2*16*8*16 FLOPs; the profiler's own count agrees here
    assert tc.meas_flops_per_point == pytest.approx(5_865_472 * 4096 / POINTS)
    assert tc.ncu_tensor_ops == pytest.approx(tc.ncu_tensor_inst * 4096)
    assert tc.meas_intensity == pytest.approx(5_865_472 * 4096 / (869_006_336 + 851_001_344))
    assert tc.err_intensity == pytest.approx(tc.meas_intensity / 14 - 1)


def test_cuda_core_flops_of_each_family():
    k = ncu.KernelProfile(0, "k", {"a": 10.0, "b": 3.0, "c": None})
    metrics = {"ffma": "a", "fadd": "b", "fmul": "c", "hfma": "a"}
    assert ncu.cuda_core_flops(k, metrics, "fp32") == 23
    assert ncu.cuda_core_flops(k, metrics, "fp16") == 40  # packed pairs: two lanes
    assert ncu.cuda_core_flops(k, metrics, "fp64") is None


def test_command_and_failures(tmp_path):
    cmd = ncu.command("/opt/ncu", ["dram__bytes_read.sum", "x.sum"], ncu.kernel_regex(["tc_stream", "tc_stream", "cc"]),
                      24, tmp_path / "log.csv", ["python", "-m", "drv", "m.json"])
    assert cmd[cmd.index("--clock-control") + 1] == "none"
    assert cmd[cmd.index("--launch-count") + 1] == "24"
    assert cmd[cmd.index("--metrics") + 1] == "dram__bytes_read.sum,x.sum"
    assert cmd[cmd.index("--kernel-name") + 1] == "regex:(?:^tcadv_marker$)|(?:tc_stream)|(?:cc)"
    assert cmd[-4:] == ["python", "-m", "drv", "m.json"] and "--print-units" in cmd
    assert "NVreg_RestrictProfilingToAdminUsers" in ncu.explain_failure("==ERROR== ERR_NVGPUCTRPERM - no permission")
    assert ncu.explain_failure("==ERROR== Failed to find metric x.sum") == "ncu: Failed to find metric x.sum"
    with pytest.raises(TcAdvisorError, match="--ncu '/no/such/ncu'"):
        ncu.find_ncu("/no/such/ncu")


def test_profile_pipeline_with_a_stand_in_ncu(tmp_path):
    exe = tmp_path / "ncu"
    exe.write_text(FAKE_NCU.format(python=sys.executable, dfma=ncu.CANDIDATES["dfma"][0],
                                   dmma=ncu.CANDIDATES["dmma_inst"][0]))
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    st = parse_stencil("Box-2D1R")
    chunk = []
    for i, (unit, fuse) in enumerate([("cuda_core", 3), ("tensor_core", 3), ("cuda_core", 5)]):
        c = Config("c", st, "double", fuse, unit, "auto", 5, 2, 1, stencil_text="Box-2D1R")
        m = Measurement(unit=unit, dtype="double", precision="fp64", fuse=fuse, points=POINTS, grid="10240x10240",
                        status="ok", mma="m16n8k16" if unit == "tensor_core" else None,
                        cuda_function="tc_stream" if unit == "tensor_core" else "cc_stream2d")
        chunk.append((10 + i, m, c))
    metrics = ncu.resolve(None)
    problem, launches = _profile_chunk(chunk, str(exe), metrics, None, dict(os.environ), 60)
    assert problem == "" and launches == 5  # three markers, two kernels
    (_, cc, _), (_, tc, _), (_, bad, _) = chunk
    assert cc.profiled and cc.ncu_kernel == "cc_stream2d" and cc.ncu_cc_flops == 2 * 6e9
    assert tc.profiled and tc.ncu_tensor_inst == 3e6 and tc.ncu_dram_read_bytes == 870e6
    assert not bad.profiled and "RuntimeError: boom" in bad.profile_note
