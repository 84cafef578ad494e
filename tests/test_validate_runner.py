"""``validate`` end to end on CPU: the GPU runner replaced by the recorded H100 runs, ncu by a stand-in."""
import json
import stat
import sys
import types

import pytest

import tcadvisor.gpu.backend as backend
import tcadvisor.gpu.runner as gpu_runner
from tcadvisor.errors import TcAdvisorError
from tcadvisor.validate import ncu
from tcadvisor.validate.records import load_results
from tcadvisor.validate.report import write_results
from tcadvisor.validate.runner import run_suites
from tcadvisor.validate.suites import load_suite

from _validate_data import DATA, FAKE_NCU, rows, run_result

SPEC = f"{DATA}/ceilings.yaml"


@pytest.fixture
def recorded_gpu(monkeypatch):
    """CuPy and the bundled kernels replaced by the recorded runs; anything else is refused."""
    recorded = {(r["stencil"], r["dtype"], r["unit"], int(r["fuse"])): r for r in rows() if r["impl"].startswith("tcadvisor")}
    calls = []
    pool = types.SimpleNamespace(free_all_blocks=lambda: None)
    monkeypatch.setattr(backend, "cupy", lambda: types.SimpleNamespace(get_default_memory_pool=lambda: pool))
    monkeypatch.setattr(backend, "device_info", lambda: {"name": "NVIDIA H100 80GB HBM3"})

    def run(stencil, dtype="double", unit=None, fuse=1, grid=None, steps=None, seed=0, check=True, gpu=None, mma=None,
            repeats=5, warmup=1, **kw):
        calls.append((stencil.name, dtype, unit, fuse, steps, repeats, warmup, check))
        row = recorded.get((stencil.name, dtype, unit, fuse))
        if row is None:
            raise TcAdvisorError(f"no bundled {unit} kernel for {stencil.name} {dtype} t={fuse} here")
        return run_result(row)

    monkeypatch.setattr(gpu_runner, "run", run)
    return calls


def suite(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("name: s\ndefaults: {sweeps: 12}\ncases:\n"
                    "  - {id: box2d, stencil: Box-2D1R, dtype: double, fuse: 1-4}\n"
                    "  - {id: box3d, stencil: Box-3D1R, dtype: double, fuse: 2, units: [cuda_core, tensor_core]}\n")
    return load_suite(str(path))


def test_validate_runs_checks_and_compares(recorded_gpu, tmp_path):
    res = run_suites([suite(tmp_path)], gpu=SPEC)
    ms = res.measurements
    assert len(ms) == 4 * 3 + 2
    assert [m.status for m in ms if m.unit == "sparse_tensor_core"] == ["skipped"] * 4
    assert all(m.ok for m in ms if m.unit != "sparse_tensor_core")
    assert ("Box-2D1R", "double", "cuda_core", 3, 36, 5, 1, True) in recorded_gpu  # 12 sweeps of 3 steps, 5 repeats
    assert res.summary["runs"] == 10 and res.summary["skipped"] == 4 and res.summary["outcomes_n"] == 5
    assert res.spec["bandwidth_gbs"] == pytest.approx(2996.1) and res.device == "NVIDIA H100 80GB HBM3"
    write_results(res, tmp_path / "out")
    assert load_results(tmp_path / "out" / "results.json").summary == res.summary


def test_time_limit_skips_what_did_not_start(recorded_gpu, tmp_path):
    ticks = iter(range(0, 10_000, 10))  # every reading of the clock is 10 s later
    res = run_suites([suite(tmp_path)], gpu=SPEC, time_limit=45, clock=lambda: next(ticks))
    status = [m.status for m in res.measurements]
    assert status[:2] == ["ok", "ok"] and set(status[5:]) == {"skipped"}
    assert all(m.reason == "time limit" for m in res.measurements[5:])


def test_profiled_with_a_stand_in_ncu(recorded_gpu, tmp_path):
    exe = tmp_path / "ncu"
    exe.write_text(FAKE_NCU.format(python=sys.executable, dfma=ncu.CANDIDATES["dfma"][0],
                                   dmma=ncu.CANDIDATES["dmma_inst"][0]))
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    seen = []
    res = run_suites([suite(tmp_path)], gpu=SPEC, profile_with=str(exe), checkpoint=lambda r: seen.append(
        json.dumps([m.profiled for m in r.measurements])))
    assert seen == [json.dumps([False] * 14)]  # the timing results, before the profile
    ok = [m for m in res.measurements if m.ok]
    assert all(m.profiled and m.meas_intensity is not None for m in ok), [m.profile_note for m in ok]
    assert res.profile["metrics"] == ncu.resolve(None) and res.profile["problems"] == []
    cc3 = next(m for m in ok if m.unit == "cuda_core" and m.fuse == 3 and m.stencil == "Box-2D1R")
    assert cc3.meas_bytes_per_point == pytest.approx(1.72e9 / cc3.points)
    assert cc3.meas_flops_per_point == pytest.approx(2 * 2e9 * 3 / cc3.points)
    assert cc3.meas_bound_basis == "ncu" and res.summary["profiled"] == 10


def test_a_profiler_that_cannot_count_stops_after_one_chunk(recorded_gpu, tmp_path, monkeypatch):
    exe = tmp_path / "ncu"
    exe.write_text(f"#!{sys.executable}\nimport sys\nprint('==ERROR== ERR_NVGPUCTRPERM - The user does not have "
                   "permission to access NVIDIA GPU Performance Counters')\nsys.exit(1)\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr("tcadvisor.validate.runner.PROFILE_CHUNK", 3)
    res = run_suites([suite(tmp_path)], gpu=SPEC, profile_with=str(exe))
    assert len(res.profile["problems"]) == 1 and "NVreg_RestrictProfilingToAdminUsers" in res.profile["problems"][0]
    ok = [m for m in res.measurements if m.ok]
    assert len(ok) == 10 and all("ERR_NVGPUCTRPERM" in m.profile_note and not m.profiled for m in ok)
    assert res.summary["runs"] == 10  # the timing results stand


def test_a_profile_out_of_time_ends_its_whole_process_group():
    import os
    import time

    from tcadvisor.validate.runner import _run_group

    script = ("import subprocess, sys, time\n"
              "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
              "print(child.pid, flush=True)\ntime.sleep(60)\n")
    start = time.monotonic()
    out, timed_out = _run_group([sys.executable, "-c", script], 2, dict(os.environ))
    assert timed_out and time.monotonic() - start < 20
    pid = int(out.split()[0])
    time.sleep(0.5)
    try:
        with open(f"/proc/{pid}/status") as f:
            state = next(line for line in f if line.startswith("State:"))
        assert "Z" in state  # killed, waiting to be reaped
    except FileNotFoundError:
        pass  # killed and reaped
