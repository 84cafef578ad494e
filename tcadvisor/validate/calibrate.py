"""``tcadvisor calibrate``: this GPU's ceilings, measured, written as a spec file.

Why measure: the model is a roofline, and a roofline drawn with datasheet peaks over-promises
wherever the silicon does not reach them (on the project's H100 the FP64 ``mma.sync m8n8k4``
runs at half the FP64 Tensor Core figure and ``mma.sp`` at 1.4x, not 2x, the dense rate).
Every ceiling the model uses is measured here with a microbenchmark from
``kernels/calibrate.cu``:

* DRAM bandwidth: a large device-to-device copy (bytes read plus written), as ``cudaMemcpy``
  and as a 16-byte copy kernel, the faster of the two;
* CUDA-core FMA rates (FP64, FP32, and FP16/BF16 packed pairs);
* the rate of every dense ``mma.sync`` and sparse ``mma.sp`` shape of
  :mod:`tcadvisor.validate.instructions` that this GPU executes.

Each kernel runs one full wave of resident blocks, long enough (about 20 ms) that launch costs
vanish; the rate is taken from the median of the timed repeats.  Clocks are read (never set)
with ``nvidia-smi`` while the benchmarks run.  The output is a spec YAML in the bundled schema
(``schema: 2``, per-instruction peaks) that ``--gpu FILE`` accepts.
"""
from __future__ import annotations

import datetime
import math
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import yaml

from ..errors import TcAdvisorError
from ..hardware import UNITS
from .instructions import FmaBenchmark, MmaBenchmark, fma_benchmarks, mma_benchmarks
from .wgmma import WgmmaBenchmark, step_source, wgmma_benchmarks

TERA = 1e12
#: nvidia-smi clock sampling period while calibrating.
SAMPLE_MS = 100
#: Architecture names by compute capability major.minor (the spec's free-text ``architecture``).
ARCHITECTURES = {(7, 0): "Volta", (7, 5): "Turing", (8, 0): "Ampere", (8, 6): "Ampere", (8, 7): "Ampere",
                 (8, 9): "Ada Lovelace", (9, 0): "Hopper", (10, 0): "Blackwell", (10, 3): "Blackwell",
                 (12, 0): "Blackwell"}


@dataclass
class Settings:
    """How long and how often each benchmark runs."""

    target_seconds: float = 0.02  # one timed launch
    repeats: int = 5
    copy_bytes: int = 2 * 1024**3
    quick: bool = False

    @classmethod
    def make(cls, quick: bool, repeats: int | None = None) -> "Settings":
        s = cls(target_seconds=0.005, repeats=3, copy_bytes=1024**3, quick=True) if quick else cls()
        if repeats is not None:
            if repeats < 1:
                raise TcAdvisorError(f"--repeats {repeats}: expected at least 1")
            s.repeats = repeats
        return s


@dataclass
class Measured:
    """One measured ceiling: bytes/s (bandwidth) or FLOP/s, and how it was obtained."""

    key: str  # "bandwidth", "cuda_core/fp64", "tensor_core/fp64/m16n8k8"
    label: str
    value: float
    seconds: list[float]
    work: float  # bytes or FLOPs per timed launch
    detail: str = ""
    sm_clock_mhz: float | None = None  # median SM clock sampled while it ran
    window: tuple[float, float] | None = None  # monotonic start and end of the timed launches


@dataclass
class Calibration:
    device: str
    cc: tuple[int, int]
    sms: int
    date: str
    bandwidth: Measured
    fma: dict[str, Measured] = field(default_factory=dict)  # precision -> rate
    mma: dict[tuple[str, str, str], Measured] = field(default_factory=dict)  # (unit, precision, shape)
    #: Hopper's warpgroup wgmma (unit, precision, shape): a yardstick, written apart from the peaks
    wgmma: dict[tuple[str, str, str], Measured] = field(default_factory=dict)
    clocks: dict = field(default_factory=dict)  # from nvidia-smi
    notes: list[str] = field(default_factory=list)
    properties: dict = field(default_factory=dict)  # device properties (tcadvisor.gpu.backend.device_info)


# --------------------------------------------------------------------------- nvidia-smi (read only)

SMI_FIELDS = ("name", "pci.bus_id", "driver_version", "clocks.max.sm", "clocks.max.mem", "clocks.sm", "clocks.mem")


def _bus(text: str) -> str:
    """A PCI bus id in one form (nvidia-smi pads the domain to 8 digits, CUDA to 4)."""
    text = text.strip().lower()
    domain, _, rest = text.partition(":")
    return f"{int(domain, 16):x}:{rest}" if rest and re.fullmatch(r"[0-9a-f]+", domain) else text


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def parse_smi_query(text: str, bus_id: str | None = None) -> dict | None:
    """The row of ``nvidia-smi --query-gpu=SMI_FIELDS --format=csv,noheader,nounits`` for ``bus_id``."""
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(SMI_FIELDS):
            continue
        row = dict(zip(SMI_FIELDS, cells))
        for key in SMI_FIELDS[3:]:
            row[key] = _number(row[key])
        rows.append(row)
    if bus_id is not None:
        for row in rows:
            if _bus(row["pci.bus_id"]) == _bus(bus_id):
                return row
    return rows[0] if len(rows) == 1 or (rows and bus_id is None) else None


def query_clocks(bus_id: str | None) -> dict:
    """Name, driver and clocks of the GPU from ``nvidia-smi`` (empty without it)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return {}
    try:
        out = subprocess.run([exe, f"--query-gpu={','.join(SMI_FIELDS)}", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    return parse_smi_query(out, bus_id) or {}


def parse_clock_sample(line: str) -> tuple[float, float] | None:
    """``"1980, 2619"`` (SM and memory clock in MHz) from ``nvidia-smi -lms``; None for other lines."""
    cells = [c.strip() for c in line.split(",")]
    if len(cells) != 2:
        return None
    sm, mem = _number(cells[0]), _number(cells[1])
    return None if sm is None or mem is None else (sm, mem)


class ClockSampler:
    """SM and memory clocks sampled by ``nvidia-smi -lms`` in the background while benchmarks run.

    Only reads: nothing here changes a clock or a setting.  Without ``nvidia-smi`` it records
    nothing and every window is ``None``.
    """

    def __init__(self, bus_id: str | None, period_ms: int = SAMPLE_MS):
        self.samples: list[tuple[float, float, float]] = []  # (monotonic time, sm, mem)
        self._proc = None
        exe = shutil.which("nvidia-smi")
        if exe is None:
            return
        cmd = [exe, "--query-gpu=clocks.sm,clocks.mem", "--format=csv,noheader,nounits", f"--loop-ms={period_ms}"]
        if bus_id:
            cmd.append(f"--id={bus_id}")
        try:
            self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        except OSError:
            self._proc = None
            return
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in self._proc.stdout:
            sample = parse_clock_sample(line)
            if sample is not None:
                self.samples.append((time.monotonic(), *sample))

    def window(self, start: float, stop: float) -> float | None:
        """Median SM clock (MHz) sampled between two ``time.monotonic()`` instants."""
        inside = [sm for t, sm, _ in list(self.samples) if start <= t <= stop]
        return statistics.median(inside) if inside else None

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# --------------------------------------------------------------------------- iterations and rates


UNROLL = 8  # CAL_UNROLL: loop trips are a multiple of it
#: The 32-bit word every MMA benchmark's operands are filled with: 1/64 in each precision (pairs of halves).
SEED_WORDS = {"tf32": 0x3C800000, "fp16": 0x24002400, "bf16": 0x3C803C80}


def scaled_iterations(probe_iters: int, probe_seconds: float, target_seconds: float, limit: int = 2**30) -> int:
    """Loop trips for a launch of about ``target_seconds``, from a probe launch (a multiple of UNROLL)."""
    if probe_seconds <= 0 or not math.isfinite(probe_seconds):
        return probe_iters
    iters = probe_iters * target_seconds / probe_seconds
    iters = int(min(max(iters, probe_iters), limit))
    return max(UNROLL, iters // UNROLL * UNROLL)


def rate(work: float, seconds: list[float]) -> float:
    """Work per second from the median of the timed repeats."""
    return work / statistics.median(seconds)


def tflops(value: float) -> float:
    """FLOP/s as TFLOP/s with four significant digits (what a spec file holds)."""
    return float(f"{value / TERA:.4g}")


# --------------------------------------------------------------------------- the spec file


def short_name(device: str) -> str:
    """The bundled spec's first alias for this device ("h100"), else a slug of its name."""
    from ..hardware import spec_for_device_name

    spec = spec_for_device_name(device)
    if spec is not None:
        return spec.short
    slug = re.sub(r"[^a-z0-9]+", "-", device.lower().replace("nvidia", "")).strip("-")
    return slug or "gpu"


def architecture(cc: tuple[int, int]) -> str:
    arch = ARCHITECTURES.get(tuple(cc))
    sm = f"sm_{cc[0]}{cc[1]}"
    return f"{arch} ({sm})" if arch else sm


def measured_source(cal: Calibration) -> str:
    """The one-line provenance every number of the file points to."""
    c = cal.clocks
    parts = [f"tcadvisor calibrate on {cal.device} (sm_{cal.cc[0]}{cal.cc[1]}, {cal.sms} SMs), {cal.date}"]
    under_load = [m.sm_clock_mhz for m in [*cal.fma.values(), *cal.mma.values()] if m.sm_clock_mhz]
    if under_load:
        lo, hi = min(under_load), max(under_load)
        parts.append(f"SM clock {lo:.0f} MHz" if lo == hi else f"SM clock {lo:.0f}-{hi:.0f} MHz")
    elif c.get("clocks.max.sm"):
        parts.append(f"SM clock at most {c['clocks.max.sm']:.0f} MHz")
    if c.get("clocks.max.mem"):
        parts.append(f"memory clock {c['clocks.max.mem']:.0f} MHz")
    if c.get("driver_version"):
        parts.append(f"driver {c['driver_version']}")
    if not c:
        parts.append("clocks not read (no nvidia-smi)")
    return ", ".join(parts)


def multiprocessors(cal: Calibration) -> dict | None:
    """The spec's ``multiprocessors`` section from the device's properties, or None where one is missing.

    The clock is the SM clock sampled while the compute benchmarks ran (the clock the measured
    rates belong to), else nvidia-smi's maximum, else the device's reported clock rate.
    """
    d = cal.properties
    keys = ("smem_per_sm", "smem_optin", "smem_reserved", "regs_per_sm", "max_threads_per_sm", "max_blocks_per_sm")
    if any(d.get(k) is None for k in keys):
        return None
    under_load = [m.sm_clock_mhz for m in [*cal.fma.values(), *cal.mma.values()] if m.sm_clock_mhz]
    mhz = (statistics.median(under_load) if under_load else cal.clocks.get("clocks.max.sm")
           or (d["clock_khz"] / 1000 if d.get("clock_khz") else None))
    if not mhz:
        return None
    return {"count": int(cal.sms), "clock_ghz": round(mhz / 1000, 4),
            "shared_memory_kib": d["smem_per_sm"] / 1024, "shared_memory_per_block_kib": d["smem_optin"] / 1024,
            "shared_memory_reserved_kib": d["smem_reserved"] / 1024, "registers": int(d["regs_per_sm"]),
            "max_warps": int(d["max_threads_per_sm"]) // 32, "max_blocks": int(d["max_blocks_per_sm"]),
            "source": "sm"}


def multiprocessors_source(cal: Calibration, sms: dict) -> str:
    """Where the ``multiprocessors`` numbers come from (the spec's ``sources.sm``)."""
    cc = f"{cal.cc[0]}.{cal.cc[1]}"
    return (f"{sms['count']} SMs (the calibrated device, sources.measured); SM clock {sms['clock_ghz']:g} GHz, the "
            f"clock sampled while the rates were measured; per-SM limits (registers, resident warps and blocks, "
            f"shared memory per SM and per block, reserved per block) read from the device's properties, the values "
            f"of compute capability {cc} in the CUDA C++ Programming Guide, \"Technical Specifications per Compute "
            f"Capability\"")


def build_spec(cal: Calibration, device_names: tuple[str, ...] = (), refined: dict | None = None) -> dict:
    """The spec file's content (schema 2: per-instruction peaks under each Tensor Core unit).

    ``device_names`` empty (a file written with ``-o``): never picked automatically, only by ``--gpu``.
    The copy kept in the user's cache names the calibrated device, so that it is picked on that GPU
    (:func:`tcadvisor.hardware.calibrated_spec_for_device`).  ``refined``: the ``refined_constants``
    section ``calibrate --fit`` fitted on this GPU (:mod:`tcadvisor.validate.calibrate_fit`), written
    last, beside the ceilings it was fitted with."""
    short = short_name(cal.device)
    bw = cal.bandwidth.value
    spec = {
        "schema": 2,
        "name": f"{cal.device} (calibrated {cal.date})",
        "vendor": "NVIDIA",
        "architecture": architecture(cal.cc),
        "aliases": [f"{short}-calibrated"],
        "device_names": list(device_names),
        "sources": {"measured": measured_source(cal)},
        "bandwidth": ({"value": float(f"{bw / 1e12:.4g}"), "unit": "TB/s", "source": "measured"} if bw >= 1e12
                      else {"value": float(f"{bw / 1e9:.4g}"), "unit": "GB/s", "source": "measured"}),
        "peak": {},
    }
    peak = spec["peak"]
    if cal.fma:
        peak["cuda_core"] = {p: {"value": tflops(m.value), "source": "measured"} for p, m in cal.fma.items()}
    for unit in UNITS[1:]:
        per_precision: dict[str, dict] = {}
        for (u, precision, shape), m in cal.mma.items():
            if u == unit:
                per_precision.setdefault(precision, {})[shape] = m.value
        if not per_precision:
            continue
        peak[unit] = {}
        for precision, shapes in per_precision.items():
            best = max(shapes.values())
            peak[unit][precision] = {
                "value": tflops(best), "source": "measured",
                "instructions": {s: {"value": tflops(v), "source": "measured"}
                                 for s, v in sorted(shapes.items(), key=lambda kv: -kv[1])},
            }
    if cal.wgmma:
        section: dict[str, dict] = {}
        for (unit, precision, shape), m in cal.wgmma.items():
            if precision in peak.get(unit, {}):
                section.setdefault(unit, {}).setdefault(precision, {})[shape] = {"value": tflops(m.value),
                                                                                  "source": "measured"}
        if section:
            spec["warpgroup_mma"] = section
    sms = multiprocessors(cal)
    if sms is not None:
        spec["sources"]["sm"] = multiprocessors_source(cal, sms)
        spec["multiprocessors"] = sms
    if refined is not None:
        spec["refined_constants"] = refined
    return spec


def spec_text(cal: Calibration, device_names: tuple[str, ...] = (), refined: dict | None = None) -> str:
    """The YAML file: a comment block with how each number was measured, then the spec."""
    lines = [f"# {cal.device}: ceilings measured by 'tcadvisor calibrate' on {cal.date}.",
             "# Rates: median of the timed repeats of one full wave of resident blocks; sparse mma.sp in",
             "# dense-equivalent FLOPs (2*m*n*k per instruction).  Choose this file with --gpu FILE.",
             *(["# warpgroup_mma: wgmma (sm_90a), per warpgroup instruction; no bundled kernel issues it, so the",
                "# model never uses these as an executed rate: they say what wgmma delivers at each tile width N."]
               if cal.wgmma else []),
             f"# bandwidth: {cal.bandwidth.detail}"]
    for m in [*cal.fma.values(), *cal.mma.values(), *cal.wgmma.values()]:
        clock = f", SM clock {m.sm_clock_mhz:.0f} MHz" if m.sm_clock_mhz else ""
        lines.append(f"# {m.label}: {m.value / TERA:.4g} TFLOP/s ({m.detail}{clock})")
    for note in cal.notes:
        lines.append(f"# note: {note}")
    if refined is not None:
        lines.append(f"# refined_constants: the refined model's constants fitted by 'tcadvisor calibrate --fit' on "
                     f"{refined['runs']} runs of the bundled kernels")
        lines.append(f"# here ({refined.get('corpus') or 'corpus not kept'}); used while the kernels' fingerprint is "
                     f"{refined['kernel_fingerprint']}.")
    body = yaml.safe_dump(build_spec(cal, device_names, refined), sort_keys=False, allow_unicode=True, width=100)
    return "\n".join(lines) + "\n" + body


# --------------------------------------------------------------------------- the GPU side


def _time(cp, launch: Callable[[], None], repeats: int, warmup: int = 1) -> list[float]:
    for _ in range(warmup):
        launch()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeats):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        launch()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
    return times


def _compile(defines: tuple, name: str):
    from ..gpu.backend import module

    return module("calibrate.cu", defines).get_function(name)


def _wave(kernel, threads: int) -> int:
    """Blocks of one full wave: every SM filled to the occupancy the kernel allows."""
    from ..gpu.backend import blocks_per_sm, device_info

    return device_info()["sms"] * blocks_per_sm(kernel, threads, 0)


def measure_bandwidth(cp, settings: Settings, notes: list[str]) -> Measured:
    """Device-to-device copy, bytes read + written: cudaMemcpy and a 16-byte copy kernel."""
    import numpy as np

    free, _ = cp.cuda.runtime.memGetInfo()
    nbytes = min(settings.copy_bytes, int(free * 0.4) // 2)
    nbytes -= nbytes % 4096
    l2 = cp.cuda.Device().attributes.get("L2CacheSize", 0)
    if nbytes < 8 * l2:
        notes.append(f"copy of only {nbytes / 2**20:.0f} MiB (free memory), less than 8x the L2 cache")
    src = cp.ones(nbytes // 8, dtype=cp.float64)
    dst = cp.empty_like(src)
    stream = cp.cuda.get_current_stream()
    memcpy = _time(cp, lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, 3, stream.ptr),
                   settings.repeats)
    kernel = _compile((), "cal_copy")
    threads = 256
    blocks = _wave(kernel, threads)
    n16 = np.int64(nbytes // 16)
    copy = _time(cp, lambda: kernel((blocks,), (threads,), (src, dst, n16)), settings.repeats)
    by_memcpy, by_kernel = rate(2 * nbytes, memcpy), rate(2 * nbytes, copy)
    best, times = (by_kernel, copy) if by_kernel >= by_memcpy else (by_memcpy, memcpy)
    detail = (f"device-to-device copy of {nbytes / 2**30:.3g} GiB, bytes read + written: cudaMemcpy "
              f"{by_memcpy / 1e12:.4g} TB/s, copy kernel {by_kernel / 1e12:.4g} TB/s (the faster is used), "
              f"median of {len(times)}")
    return Measured("bandwidth", "DRAM copy bandwidth", best, times, 2 * nbytes, detail)


def _fma_operands(precision: str):
    import numpy as np

    if precision == "fp64":
        return np.float64(0.999999), np.float64(1e-7)
    if precision == "fp32":
        return np.float32(0.9999), np.float32(1e-4)

    def pair(bits: int) -> np.uint32:
        return np.uint32(bits | (bits << 16))

    if precision == "fp16":
        return pair(int(np.float16(0.999).view(np.uint16))), pair(int(np.float16(0.001).view(np.uint16)))
    return pair(0x3F7F), pair(0x3A83)  # bf16 0.996, 0.001


def _run_rate(cp, launch_with, probe_iters: int, work_per_iter: float, settings: Settings):
    """Time ``launch_with(iters)`` at a length of about ``settings.target_seconds``."""
    probe = _time(cp, lambda: launch_with(probe_iters), 1)
    iters = scaled_iterations(probe_iters, probe[0], settings.target_seconds)
    start = time.monotonic()
    times = _time(cp, lambda: launch_with(iters), settings.repeats)
    return iters, times, rate(work_per_iter * iters, times), (start, time.monotonic())


def measure_fma(cp, bench: FmaBenchmark, settings: Settings) -> Measured:
    import numpy as np

    chains, threads = 8, 256
    kernel = _compile((("CAL_FMA", bench.code), ("CAL_CHAINS", chains), ("CAL_UNROLL", UNROLL)), "cal_fma")
    blocks = _wave(kernel, threads)
    a, b = _fma_operands(bench.precision)
    out = cp.empty(blocks * threads, dtype=cp.float64)
    per_iter = blocks * threads * chains * bench.flops_per_instruction
    iters, times, value, window = _run_rate(
        cp, lambda n: kernel((blocks,), (threads,), (a, b, np.int32(n), out)), 1024, per_iter, settings)
    kind = "packed HFMA2" if bench.lanes == 2 else "FMA"
    detail = f"{kind}, {blocks} blocks x {threads} threads x {chains} chains x {iters} iterations, median of {len(times)}"
    return Measured(f"cuda_core/{bench.precision}", f"CUDA cores {bench.precision.upper()} {kind}", value, times,
                    per_iter * iters, detail, window=window)


def measure_mma(cp, bench: MmaBenchmark, settings: Settings, notes: list[str]) -> Measured:
    import numpy as np

    chains, threads = 4, 128
    base = (("CAL_MMA", bench.code), ("CAL_CHAINS", chains), ("CAL_UNROLL", UNROLL))
    variant = ""
    if bench.sparse:
        try:
            kernel = _compile(base + (("CAL_ORDERED", 1),), "cal_mma")
            variant = "mma.sp::ordered_metadata"
        except RuntimeError:
            kernel = _compile(base + (("CAL_ORDERED", 0),), "cal_mma")
            variant = "mma.sp"
            notes.append(f"{bench.label}: this NVRTC has no mma.sp::ordered_metadata; timed the plain mma.sp")
    else:
        kernel = _compile(base, "cal_mma")
    blocks = _wave(kernel, threads)
    if bench.precision == "fp64":
        seed = cp.full(16, 1.0 / 64, dtype=cp.float64)
    else:
        word = SEED_WORDS[bench.precision]
        seed = cp.full(16, word, dtype=cp.uint32)
    meta = np.uint32(0x44444444)  # positions {0, 1} of every group: valid and ordered
    out = cp.empty(blocks * threads, dtype=cp.float64)
    warps = blocks * threads // 32
    per_iter = warps * chains * bench.flops_per_instruction
    iters, times, value, window = _run_rate(
        cp, lambda n: kernel((blocks,), (threads,), (seed, meta, np.int32(n), out)), 256, per_iter, settings)
    detail = (f"{variant or 'mma.sync'}, {blocks} blocks x {threads // 32} warps x {chains} chains x {iters} "
              f"iterations, median of {len(times)}")
    return Measured(f"{bench.unit}/{bench.precision}/{bench.shape}", bench.label, value, times, per_iter * iters,
                    detail, window=window)


#: wgmma issue settings, the measured best of benchmarks/wgmma_rates.py's scan (validation/results/
#: h200-2026-11-27/wgmma/wgmma-scan.csv): two warpgroups per block, one commit group left in flight, two
#: accumulator tiles per warpgroup (one from N = 128 on, where two would not fit in the registers).
WGMMA_WARPGROUPS, WGMMA_WAIT = 2, 1
WGMMA_SMEM = 40960  # bytes of shared memory for B (and A) per block: kernels/calibrate_wgmma.cu's CAL_SMEM


def wgmma_chains(bench: WgmmaBenchmark) -> int:
    """Accumulator tiles per warpgroup: two, one from N = 128 on (two would not fit in the registers)."""
    return 2 if bench.n <= 64 else 1


def wgmma_kernel(bench: WgmmaBenchmark, chains: int, warpgroups: int = WGMMA_WARPGROUPS, wait: int = WGMMA_WAIT):
    """``cal_wgmma`` for ``bench`` (kernels/calibrate_wgmma.cu after its instruction, compiled for sm_90a; cached)."""
    from .arch_module import arch_module

    defines = (("CAL_CHAINS", chains), ("CAL_UNROLL", UNROLL // chains), ("CAL_WG", warpgroups),
               ("CAL_WAIT", wait), ("CAL_SMEM", WGMMA_SMEM))
    return arch_module("calibrate_wgmma.cu", defines, step_source(bench), "sm_90a").get_function("cal_wgmma")


def measure_wgmma(cp, bench: WgmmaBenchmark, settings: Settings, chains: int | None = None,
                  warpgroups: int = WGMMA_WARPGROUPS, wait: int = WGMMA_WAIT) -> Measured:
    """One warpgroup instruction's rate; ``chains``, ``warpgroups`` and ``wait`` are calibrate's settings
    unless a scan (benchmarks/wgmma_rates.py) names others."""
    import numpy as np

    from ..gpu.backend import blocks_per_sm, device_info

    chains = wgmma_chains(bench) if chains is None else chains
    kernel = wgmma_kernel(bench, chains, warpgroups, wait)
    threads = 128 * warpgroups
    blocks = device_info()["sms"] * blocks_per_sm(kernel, threads, WGMMA_SMEM)
    seed = cp.full(16, SEED_WORDS[bench.precision], dtype=cp.uint32)
    out = cp.empty(blocks * threads, dtype=cp.float64)
    per_iter = blocks * warpgroups * chains * bench.flops_per_instruction
    iters, times, value, window = _run_rate(
        cp, lambda n: kernel((blocks,), (threads,), (seed, np.uint32(0x44444444), np.int32(n), out),
                             shared_mem=WGMMA_SMEM), 64, per_iter, settings)
    kind = "wgmma.sp" if bench.sparse else "wgmma"
    detail = (f"{kind}, A in {'shared memory' if bench.a_shared else 'registers'}, {blocks} blocks x "
              f"{warpgroups} warpgroups x {chains} chains x {iters} iterations, median of {len(times)}")
    return Measured(f"{bench.unit}/{bench.precision}/{bench.shape}", bench.label, value, times, per_iter * iters,
                    detail, window=window)


def calibrate(settings: Settings, progress: Callable[[str], None] | None = None) -> Calibration:
    """Run every benchmark this GPU supports (needs CuPy and a GPU)."""
    from ..gpu.backend import cupy, device_info

    cp = cupy()
    info = device_info()
    cc = tuple(info["cc"])
    try:
        bus = cp.cuda.Device().pci_bus_id
    except Exception:  # noqa: BLE001 - older CuPy: nvidia-smi then reports the only GPU or nothing
        bus = None
    say = progress or (lambda text: None)
    fmas, mmas = fma_benchmarks(cc), mma_benchmarks(cc, settings.quick)
    wgmmas = wgmma_benchmarks(cc, settings.quick)
    total = 1 + len(fmas) + len(mmas) + len(wgmmas)
    notes: list[str] = []
    clocks = query_clocks(bus)
    say(f"calibrating {info['name']} (sm_{cc[0]}{cc[1]}, {info['sms']} SMs): {total} benchmarks"
        + (", quick" if settings.quick else ""))
    with ClockSampler(bus) as sampler:
        bandwidth = measure_bandwidth(cp, settings, notes)
        cp.get_default_memory_pool().free_all_blocks()  # the copy buffers are gone with the call
        say(f"[1/{total}] DRAM copy bandwidth: {bandwidth.value / 1e12:.4g} TB/s")
        cal = Calibration(info["name"], cc, info["sms"], datetime.date.today().isoformat(), bandwidth,
                          clocks=clocks, notes=notes, properties=dict(info))
        step = 1
        for bench in fmas:
            step += 1
            m = measure_fma(cp, bench, settings)
            cal.fma[bench.precision] = m
            say(f"[{step}/{total}] {m.label}: {m.value / TERA:.4g} TFLOP/s")
        for bench in mmas:
            step += 1
            m = measure_mma(cp, bench, settings, notes)
            cal.mma[(bench.unit, bench.precision, str(bench.shape))] = m
            say(f"[{step}/{total}] {m.label}: {m.value / TERA:.4g} TFLOP/s")
        for bench in wgmmas:
            step += 1
            try:
                m = measure_wgmma(cp, bench, settings)
            except RuntimeError as exc:  # an NVRTC without sm_90a: said once, the other rates stand
                notes.append(f"wgmma not measured: this NVRTC did not compile it for sm_90a "
                             f"({str(exc).splitlines()[-1][:160]})")
                say(f"[{step}/{total}] wgmma skipped: NVRTC did not compile it for sm_90a")
                break
            cal.wgmma[(bench.unit, bench.precision, str(bench.shape))] = m
            say(f"[{step}/{total}] {m.label}: {m.value / TERA:.4g} TFLOP/s")
        time.sleep(2 * SAMPLE_MS / 1000)  # the sample just after the last benchmark
        measured = [*cal.fma.values(), *cal.mma.values(), *cal.wgmma.values()]
        assign_clocks(measured, sampler)
    clocks_seen = [m.sm_clock_mhz for m in measured if m.sm_clock_mhz]
    if clocks_seen:
        say(f"SM clock while the compute benchmarks ran: {min(clocks_seen):.0f}-{max(clocks_seen):.0f} MHz")
    return cal


def assign_clocks(measured: list[Measured], sampler: "ClockSampler") -> None:
    """Each benchmark's SM clock: the samples taken while it ran, or the first one just after it
    (a benchmark of a few tens of milliseconds may fall between two samples)."""
    for m in measured:
        if m.window is None:
            continue
        start, stop = m.window
        m.sm_clock_mhz = sampler.window(start, stop) or sampler.window(stop, stop + 2 * SAMPLE_MS / 1000)


def stderr_progress(text: str) -> None:
    print(f"calibrate: {text}", file=sys.stderr, flush=True)
