"""Host-side logic of the GPU runner that needs no GPU: grids, weights, launch splitting, tolerances."""
import numpy as np
import pytest

from tcadvisor.errors import TcAdvisorError
from tcadvisor.gpu.backend import split_stream
from tcadvisor.gpu.commands import load_weights
from tcadvisor.gpu.runner import check_weights, default_weights, parse_grid
from tcadvisor.stencil import Stencil


def test_parse_grid():
    assert parse_grid("10240x10240", 2) == (10240, 10240)
    assert parse_grid("7×9×70", 3) == (7, 9, 70)
    assert parse_grid((5,), 1) == (5,)
    for bad, needle in (("0x3", "at least 1"), ("3", "2D"), ("axb", "NxM"), ("70000x70000", "2^31")):
        with pytest.raises(TcAdvisorError, match=needle.replace("^", r"\^")):
            parse_grid(bad, 2)


def test_default_weights_cover_the_support_and_sum_to_one():
    for st in (Stencil.box(2, 1), Stencil.star(3, 2), Stencil.box(1, 4)):
        w = default_weights(st, seed=3)
        assert np.array_equal(w != 0, st.mask()) and np.isclose(w.sum(), 1.0) and np.all(w >= 0)
        assert not np.array_equal(w, default_weights(st, seed=4))


def test_check_weights_rejects_what_the_kernels_cannot_run():
    st = Stencil.star(2, 1)
    with pytest.raises(TcAdvisorError, match="outside the support"):
        check_weights(st, np.ones((3, 3)))
    with pytest.raises(TcAdvisorError, match="do not fit"):
        check_weights(st, np.ones((5, 5)))
    with pytest.raises(TcAdvisorError, match="finite"):
        check_weights(Stencil.box(2, 1), np.full((3, 3), np.nan))


def test_weights_files(tmp_path):
    st = Stencil.box(3, 1)
    w = np.arange(27.0).reshape(3, 3, 3) + 1
    text = "\n\n".join("\n".join(" ".join(str(v) for v in row) for row in plane) for plane in w)
    (tmp_path / "w.txt").write_text(text)
    assert np.array_equal(check_weights(st, load_weights(str(tmp_path / "w.txt"), st)), w)
    np.save(tmp_path / "w.npy", w)
    assert np.array_equal(load_weights(str(tmp_path / "w.npy"), st), w)
    (tmp_path / "bad.txt").write_text("1 2 x\n")
    with pytest.raises(TcAdvisorError, match="cannot be read"):
        load_weights(str(tmp_path / "bad.txt"), st)


@pytest.mark.parametrize("extent, across, slots, fill", [(10240, 41, 396, 11), (10240, 42, 264, 11),
                                                         (512, 1024, 264, 3), (7, 5, 264, 20), (1, 1, 132, 4)])
def test_split_stream_covers_the_axis_in_whole_waves(extent, across, slots, fill):
    chunks, per = split_stream(extent, across, slots, fill)
    assert chunks * per >= extent > (chunks - 1) * per  # every slice, no empty chunk
    waves = -(-(across * chunks) // slots)
    cost = waves * (per + fill)
    # no alternative split with 1..8 waves' worth of blocks is cheaper by the same estimate
    for c in range(1, min(extent, 8 * slots) + 1):
        p = -(-extent // c)
        c2 = -(-extent // p)
        assert cost <= -(-(across * c2) // slots) * (p + fill) or (c2 * across) > 8 * slots


def test_sweep_plan_fuses_and_keeps_the_remainder():
    from tcadvisor.gpu.runner import sweep_plan

    assert sweep_plan(7, 3) == [3, 3, 1]
    assert sweep_plan(6, 3) == [3, 3]
    assert sweep_plan(2, 3) == [2]


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_default_grids_exceed_the_l2_cache_in_every_precision(dims):
    import math

    from tcadvisor.gpu.runner import default_grid, parse_grid

    st = Stencil.box(dims, 1)
    points = math.prod(parse_grid(default_grid(st, "half"), dims))
    assert 2 * points * 2 > 4 * 50e6  # two 2-byte fields, four times an H100's 50 MB L2


@pytest.mark.parametrize("args, message", [
    (["--unit", "gpu_core"], "the bundled kernels run on cuda_core, tensor_core, sparse_tensor_core"),
    (["--impl", "SPIDER"], "SPIDER has no bundled kernel"),
    (["--unit", "tensor_core", "--impl", "tcadvisor-sptc"], "runs on sparse_tensor_core")])
def test_run_refuses_units_and_profiles_without_a_kernel(run_cli, args, message):
    r = run_cli("run", "Box-2D1R", *args)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args, message", [
    (["--unit", "sparse_tensor_core", "--knob", "stagez=3"],
     "--knob stagez: tcadvisor-sptc's kernel takes aregs, even_window, fixed_alignment, half_accumulators, inner_rows, "
     "l2_prefetch, line_rows, min_blocks, "
     "prefetch, stages, two_chains, "
     "unroll, vector_loads, warps, weights_shared, whole_windows, x_tiles"),
    (["--unit", "tensor_core", "--knob", "unroll=2"], "--knob unroll: tcadvisor-tc's kernel takes bregs,"),
    (["--unit", "sparse_tensor_core", "--knob", "stages"], "--knob 'stages': expected NAME=VALUE"),
    (["--unit", "sparse_tensor_core", "--knob", "stages=three"], "--knob stages=three: expected an integer"),
    (["--unit", "tensor_core", "--knob", "weights_shared=yes"], "--knob weights_shared=yes: expected true or false"),
    (["--unit", "sparse_tensor_core", "--knob", "stages=3", "--knob", "stages=4"], "--knob stages given twice")])
def test_run_refuses_knobs_the_kernel_does_not_take(run_cli, args, message):
    """``--knob`` names are the kernel's own constructor arguments, values of their type, checked before any GPU is
    asked for (this machine has none: the refusal is the knob's, in one line, exit status 2)."""
    r = run_cli("run", "Box-2D1R", *args)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_run_passes_the_knobs_to_the_kernel(monkeypatch, capsys):
    """Parsed knobs reach the runner as the kernel's keyword arguments, typed; without any, none are passed."""
    from types import SimpleNamespace

    from tcadvisor import cli
    from tcadvisor.gpu import commands, runner

    seen = []

    def fake_run(stencil, dtype, unit, kernel_options=None, **kw):
        seen.append(kernel_options)
        return SimpleNamespace(steps=1, sweeps=[1], checked=True, passed=True)

    monkeypatch.setattr(runner, "run", fake_run)
    monkeypatch.setattr(commands, "format_result", lambda res: "RESULT")
    assert cli.main(["run", "Box-2D1R", "--unit", "sparse_tensor_core", "--dtype", "half", "-q", "--knob",
                     "stages=3", "--knob", "weights_shared=True", "--knob", " x_tiles = 2 "]) == 0
    assert cli.main(["run", "Box-2D1R", "-q", "--knob", "layout=stream", "--knob", "keep_columns=false"]) == 0
    assert cli.main(["run", "Box-2D1R", "-q"]) == 0
    assert seen == [{"stages": 3, "weights_shared": True, "x_tiles": 2},
                    {"layout": "stream", "keep_columns": False}, None]
    assert capsys.readouterr().out.split() == ["RESULT"] * 3


def test_timing_holds_the_gpu_before_each_interval(monkeypatch):
    """Each timed repeat enqueues the hold kernel first, then start, the work, stop; the hold lasts at least
    twice as long as the host took to enqueue the previous run (a fake CuPy records the order)."""
    import time
    import types

    from tcadvisor.gpu import timing

    log = []

    class Event:
        def __init__(self):
            self.t = None

        def record(self):
            self.t = time.perf_counter()
            log.append("record")

        def synchronize(self):
            pass

    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(
        Event=Event, Device=lambda: types.SimpleNamespace(synchronize=lambda: None),
        get_elapsed_time=lambda a, b: (b.t - a.t) * 1e3))
    monkeypatch.setattr(timing, "cupy", lambda: fake)
    monkeypatch.setattr(timing, "hold_gpu", lambda s: log.append(("hold", s)))

    def work():
        log.append("work")
        time.sleep(0.004)  # the host's time to enqueue
        return 7

    times, out = timing.timed_runs(work, repeats=3, warmup=1)
    assert out == 7 and len(times) == 3
    assert log[0] == "work"  # warm-up, untimed
    for k in range(3):
        hold, start, run, stop = log[1 + 4 * k: 5 + 4 * k]
        assert (start, run, stop) == ("record", "work", "record")
        assert hold[0] == "hold" and hold[1] >= 2 * 0.004
    first = timing.timed_runs(lambda: None, repeats=1, warmup=0)
    assert first[0] and log[-3:] == [("hold", timing.HOLD_FIRST_S), "record", "record"]


def test_the_ghost_refresh_is_reported_beside_the_throughput():
    """``run`` times one ghost refresh alone (each timed sweep began with one); the text and the JSON give it per
    sweep and as a share of the timed sweeps, and say the model's bound leaves it out."""
    from tcadvisor.gpu import commands
    from tcadvisor.gpu.runner import RunResult
    from tcadvisor.stencil import parse_stencil

    res = RunResult(stencil=parse_stencil("Box-3D1R"), unit="sparse_tensor_core", impl="tcadvisor-sptc",
                    kernel_name="sparse_tensor_cores", cuda_function="sptc_stream", dtype="half", precision="fp16",
                    mma="m16n8k32", fuse=2, grid=(512, 512, 512), steps=8, sweeps=[2, 2, 2, 2], device="GPU",
                    kernel="k", seconds=4 * 470e-6, seconds_all=[4 * 470e-6] * 5, gstencils=571.0,
                    useful_tflops=30.8, executed_tflops=90.0, executed_flops_per_point=1000.0, alpha=None,
                    bound_gpu="H100", bound_gstencils=1149.0, bound="memory", prediction=None, checked=False,
                    refresh_seconds=51.7e-6)
    assert res.refresh_share == pytest.approx(51.7 / 470)
    text = commands.format_result(res)
    line = next(x for x in text.splitlines() if "ghost refresh" in x)
    assert "51.7 µs before each sweep" in line and "11.0 % of the time" in line and "bound leaves it out" in line
    d = commands.result_dict(res)
    assert d["refresh_seconds_per_sweep"] == pytest.approx(51.7e-6) and d["refresh_share"] == pytest.approx(0.11,
                                                                                                              abs=1e-3)
    res.refresh_seconds = None  # results made before the refresh was timed: no line, no share
    assert res.refresh_share is None and "ghost refresh" not in commands.format_result(res)
