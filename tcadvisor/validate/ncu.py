"""Nsight Compute: which counters measure C and M, how ncu is run, and how its CSV is read.

The paper's Table 2 sets the model's C (FLOPs per output point and sweep), M (DRAM bytes) and
I = C/M against Nsight Compute.  Here each profiled configuration is one launch of the kernel's
main CUDA function (one sweep of ``fuse`` steps; the ghost-refresh kernels have other names),
with ``--clock-control none`` (the clocks the user runs at, never locked by the profiler):

* M: ``dram__bytes_read.sum + dram__bytes_write.sum`` / output points;
* C on CUDA cores: thread-level FP instructions of the kernel's precision, an FMA counted as 2
  FLOPs (``smsp__sass_thread_inst_executed_op_{d,f,h}{fma,add,mul}_pred_on.sum``);
* C on Tensor Cores: warp-level tensor instructions times the FLOPs of the kernel's instruction
  shape, 2·m·n·k (:mod:`.instructions`: one PTX mma is one SASS instruction), counted by
  ``sm__inst_executed_pipe_tensor_op_dmma.sum`` (FP64 DMMA) or
  ``sm__inst_executed_pipe_tensor_op_hmma.sum`` (FP16, BF16 and TF32, dense and sparse ``mma.sp``);
  the profiler's own tensor FLOP count ``sm__ops_path_tensor_src_<type>[_dst_fp32][_sparsity_on]``
  is recorded beside it where the GPU has it.

Metric names differ between architectures and ncu versions, so the names are resolved against
``ncu --query-metrics`` on the GPU itself: for each quantity the first candidate the device knows.
``python -m tcadvisor.validate.ncu --candidates`` prints what this GPU offers for each quantity.
"""
from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import TcAdvisorError

#: Quantity -> candidate metrics, preferred first.  ``smsp__`` and ``sm__`` sums are equal.
CANDIDATES: dict[str, tuple[str, ...]] = {
    "dram_read": ("dram__bytes_read.sum",),
    "dram_write": ("dram__bytes_write.sum",),
    "duration": ("gpu__time_duration.sum",),
    **{f"{op}": (f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum",
                 f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum")
       for op in ("dfma", "dadd", "dmul", "ffma", "fadd", "fmul", "hfma", "hadd", "hmul")},
    "dmma_inst": ("sm__inst_executed_pipe_tensor_op_dmma.sum", "smsp__inst_executed_pipe_tensor_op_dmma.sum"),
    "hmma_inst": ("sm__inst_executed_pipe_tensor_op_hmma.sum", "smsp__inst_executed_pipe_tensor_op_hmma.sum"),
    "ops_fp64": ("sm__ops_path_tensor_src_fp64.sum",),
    "ops_tf32": ("sm__ops_path_tensor_src_tf32_dst_fp32.sum", "sm__ops_path_tensor_src_tf32.sum"),
    # On Hopper (ncu 2025.3) the 16-bit and sparse counters carry the instruction family in their name
    # (``_op_hmma_``, seen in ``ncu --query-metrics`` on the project's H100); older names come second.
    "ops_fp16": ("sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32.sum", "sm__ops_path_tensor_src_fp16_dst_fp32.sum"),
    "ops_bf16": ("sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum", "sm__ops_path_tensor_src_bf16_dst_fp32.sum"),
    "ops_tf32_sparse": ("sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_on.sum",
                        "sm__ops_path_tensor_src_tf32_dst_fp32_sparsity_on.sum"),
    "ops_fp16_sparse": ("sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_on.sum",
                        "sm__ops_path_tensor_src_fp16_dst_fp32_sparsity_on.sum"),
    "ops_bf16_sparse": ("sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_on.sum",
                        "sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_on.sum"),
}
#: Quantities requested even when the device's metric list could not be read (ncu knows them on
#: every GPU since Volta/Ampere); the others only when ``--query-metrics`` lists them.
ESSENTIAL = ("dram_read", "dram_write", "duration", "dfma", "dadd", "dmul", "ffma", "fadd", "fmul",
             "dmma_inst", "hmma_inst")
#: CUDA-core FLOPs of a precision: (fma, add, mul) quantities; an FMA is 2 FLOPs.
CC_OPS = {"fp64": ("dfma", "dadd", "dmul"), "fp32": ("ffma", "fadd", "fmul"),
          "fp16": ("hfma", "hadd", "hmul"), "bf16": ("hfma", "hadd", "hmul")}
#: Tensor-instruction counter of each precision.
TENSOR_INST = {"fp64": "dmma_inst", "tf32": "hmma_inst", "fp16": "hmma_inst", "bf16": "hmma_inst"}
#: Patterns of the metric names printed by ``--candidates`` (for the person confirming the names).
INTERESTING = re.compile(r"^(dram__bytes_(read|write)|(sm|smsp)__sass_thread_inst_executed_op_[dfh](fma|add|mul)_pred_on"
                         r"|(sm|smsp)__inst_executed_pipe_tensor\w*|sm__ops_path_tensor\w*|sm__pipe_tensor\w*cycles_active)$")
_UNIT_SCALE = {"": 1.0, "byte": 1.0, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12,
               "inst": 1.0, "warp": 1.0, "thread": 1.0, "cycle": 1.0, "(!)": 1.0,
               # counts that ncu labels by what they count, even with --print-units base
               "block": 1.0, "sector": 1.0, "request": 1.0, "register/thread": 1.0, "sm": 1.0,
               "nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0, "ns": 1e-9, "us": 1e-6, "ms": 1e-3}


class ProfileError(TcAdvisorError):
    """Nsight Compute could not profile (not found, no counter permission, a failed run)."""


# --------------------------------------------------------------------------- finding ncu


def find_ncu(path: str | None) -> str:
    """``--ncu PATH`` or ``ncu`` on PATH, else a one-line error."""
    if path:
        exe = shutil.which(path) or (path if Path(path).is_file() else None)
        if exe is None:
            raise ProfileError(f"--ncu {path!r}: no such executable")
        return exe
    exe = shutil.which("ncu")
    if exe is None:
        raise ProfileError("--profile needs Nsight Compute: 'ncu' is not on PATH; install it (CUDA toolkit) "
                           "or pass --ncu PATH")
    return exe


def version(ncu: str) -> str:
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


# --------------------------------------------------------------------------- metric names


def parse_query_metrics(text: str) -> set[str]:
    """Base metric names (no ``.sum`` suffix) from ``ncu --query-metrics`` (table or CSV output)."""
    names = set()
    for line in text.splitlines():
        first = line.strip().split(",")[0].split()[0] if line.strip() else ""
        first = first.strip('"')
        if re.fullmatch(r"[a-z0-9]+__[a-z0-9_]+(\.[a-z_]+)*", first):
            names.add(first)
    return names


def query_metrics(ncu: str) -> set[str] | None:
    """The metrics the present GPU offers, or None where ncu cannot list them."""
    try:
        proc = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    names = parse_query_metrics(proc.stdout)
    return names or None


def _base(metric: str) -> str:
    return metric.rsplit(".", 1)[0] if metric.endswith((".sum", ".avg", ".max", ".min")) else metric


def resolve(available: set[str] | None) -> dict[str, str]:
    """Quantity -> metric to request: the first candidate the device offers.

    Without the device's list only the :data:`ESSENTIAL` quantities are requested, by their first
    candidate (an unknown metric makes ncu refuse the whole run).
    """
    out = {}
    for quantity, names in CANDIDATES.items():
        if available is None:
            if quantity in ESSENTIAL:
                out[quantity] = names[0]
            continue
        for name in names:
            if _base(name) in available or name in available:
                out[quantity] = name
                break
    return out


def candidates_report(available: set[str] | None) -> str:
    """What this GPU offers for each quantity and which name is used; then every related metric."""
    if available is None:
        return "ncu --query-metrics listed nothing for this GPU; the first candidate of each quantity is assumed"
    chosen = resolve(available)
    lines = ["quantity -> metric used (candidates, in order of preference):"]
    for quantity, names in CANDIDATES.items():
        lines.append(f"  {quantity:16s} -> {chosen.get(quantity, 'NOT AVAILABLE'):60s} ({', '.join(names)})")
    related = sorted(n for n in available if INTERESTING.match(n))
    lines.append(f"related metrics this GPU offers ({len(related)}):")
    lines += [f"  {n}" for n in related]
    return "\n".join(lines)


# --------------------------------------------------------------------------- the profiler's CSV


@dataclass
class KernelProfile:
    """One profiled launch: ncu's ID, the kernel's name and its metric values (base units)."""

    id: int
    name: str
    metrics: dict[str, float | None] = field(default_factory=dict)
    grid: str = ""  # "(132, 1, 1)"

    def get(self, metric: str | None) -> float | None:
        return None if metric is None else self.metrics.get(metric)


def parse_value(text: str, unit: str = "") -> float | None:
    """A metric value from ncu's CSV ("1,234,567", "12.5", "n/a") scaled by its unit to base units."""
    text = str(text).strip().replace(",", "")
    if text in ("", "n/a", "N/A", "nan"):
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    scale = _UNIT_SCALE.get(unit.strip().lower())
    if scale is None:
        raise ProfileError(f"ncu reported a metric in unit {unit!r}, which tcadvisor does not convert; "
                           "run ncu with --print-units base")
    return value * scale


def _csv_rows(text: str) -> list[list[str]]:
    """The CSV part of ncu's output (it may be mixed with ==PROF== lines and program output)."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    return list(csv.reader(io.StringIO("\n".join(lines))))


def parse_csv(text: str) -> list[KernelProfile]:
    """Profiled launches from ``ncu --csv``, either page: ``raw`` (one row per launch, a units row
    under the header) or ``details`` (one row per metric with Metric Name / Unit / Value)."""
    rows = _csv_rows(text)
    if not rows:
        return []
    header = rows[0]
    try:
        i_id, i_name = header.index("ID"), header.index("Kernel Name")
        i_grid = header.index("Grid Size") if "Grid Size" in header else None
    except ValueError:
        raise ProfileError("ncu's CSV has no 'ID' and 'Kernel Name' columns; expected --csv output") from None
    launches: dict[int, KernelProfile] = {}
    if "Metric Name" in header:  # details page
        i_metric, i_unit, i_value = header.index("Metric Name"), header.index("Metric Unit"), header.index("Metric Value")
        for row in rows[1:]:
            if len(row) != len(header) or not row[i_id].strip().isdigit():
                continue
            k = launches.setdefault(int(row[i_id]), KernelProfile(int(row[i_id]), row[i_name],
                                                                  grid=row[i_grid] if i_grid is not None else ""))
            k.metrics[row[i_metric]] = parse_value(row[i_value], row[i_unit])
        return [launches[i] for i in sorted(launches)]
    units = [""] * len(header)
    body = rows[1:]
    if body and not body[0][i_id].strip().isdigit():  # the units row of the raw page
        units, body = body[0], body[1:]
    metric_cols = [(i, h) for i, h in enumerate(header) if "__" in h]
    for row in body:
        if len(row) != len(header) or not row[i_id].strip().isdigit():
            continue
        k = KernelProfile(int(row[i_id]), row[i_name], grid=row[i_grid] if i_grid is not None else "")
        for i, h in metric_cols:
            try:
                k.metrics[h] = parse_value(row[i], units[i] if i < len(units) else "")
            except ProfileError:  # a column ncu adds on its own (launch__*), in a unit we do not use
                k.metrics[h] = None
        launches[k.id] = k
    return [launches[i] for i in sorted(launches)]


#: The kernel the profile driver launches before each configuration, its grid's x extent
#: being the configuration's index + 1: the launches between two markers belong to one configuration.
MARKER = "tcadv_marker"


def assign_launches(launches: list[KernelProfile]) -> dict[int, list[KernelProfile]]:
    """Profiled launches grouped by configuration index, using the marker launches between them."""
    out: dict[int, list[KernelProfile]] = {}
    current = None
    for k in launches:
        if k.name == MARKER:
            m = re.match(r"\(?\s*(\d+)", k.grid)
            current = int(m.group(1)) - 1 if m else None
            continue
        if current is not None:
            out.setdefault(current, []).append(k)
    return out


def pick_launch(launches: list[KernelProfile], function: str) -> tuple[KernelProfile | None, str]:
    """The configuration's main-kernel launch (the first whose name matches ``function``) and a note."""
    hits = [k for k in launches if re.search(function, k.name)]
    if not hits:
        names = ", ".join(sorted({k.name for k in launches})) or "none"
        return None, f"no profiled launch of {function!r} (launches: {names})"
    note = f"{len(hits)} launches of the kernel profiled; the first is used" if len(hits) > 1 else ""
    return hits[0], note


def cuda_core_flops(k: KernelProfile, metrics: dict[str, str], precision: str) -> float | None:
    """FLOPs on CUDA cores at ``precision``'s family: 2·FMA + ADD + MUL thread instructions
    (packed FP16/BF16 pairs count their two lanes)."""
    fma, add, mul = (k.get(metrics.get(q)) for q in CC_OPS[precision])
    if fma is None and add is None and mul is None:
        return None
    lanes = 2 if precision in ("fp16", "bf16") else 1
    return lanes * (2 * (fma or 0) + (add or 0) + (mul or 0))


def tensor_ops(k: KernelProfile, metrics: dict[str, str], precision: str, sparse: bool) -> float | None:
    key = f"ops_{precision}" + ("_sparse" if sparse else "")
    return k.get(metrics.get(key))


# --------------------------------------------------------------------------- running ncu


def command(ncu: str, metrics: list[str], kernel_regex: str, launches: int, log: Path, program: list[str]) -> list[str]:
    """The ncu command line: clocks left alone, one launch per configuration, CSV in base units."""
    return [ncu, "--clock-control", "none", "--target-processes", "all",
            "--kernel-name", f"regex:{kernel_regex}", "--launch-count", str(launches),
            "--metrics", ",".join(metrics), "--csv", "--page", "raw", "--print-units", "base",
            "--log-file", str(log), *program]


def kernel_regex(functions: list[str]) -> str:
    """One regex for ``--kernel-name``: the marker and every configuration's CUDA function."""
    unique = list(dict.fromkeys([f"^{MARKER}$", *(f for f in functions if f)]))
    return "|".join(f"(?:{f})" for f in unique)


def explain_failure(output: str) -> str:
    """One line on why ncu failed, from its output."""
    if "ERR_NVGPUCTRPERM" in output:
        return ("ncu has no permission to read the GPU's performance counters (ERR_NVGPUCTRPERM); "
                "run as root or allow profiling for all users (NVreg_RestrictProfilingToAdminUsers=0)")
    for line in output.splitlines():
        if "==ERROR==" in line:
            return "ncu: " + line.split("==ERROR==", 1)[1].strip()
    tail = [ln.strip() for ln in output.splitlines() if ln.strip()]
    return "ncu failed" + (f": {tail[-1]}" if tail else "")


def main(argv: list[str] | None = None) -> int:
    """``python -m tcadvisor.validate.ncu --candidates [--ncu PATH]``: the metric names on this GPU."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m tcadvisor.validate.ncu")
    ap.add_argument("--candidates", action="store_true", help="print the metrics this GPU offers for each quantity")
    ap.add_argument("--ncu", help="path of ncu (default: on PATH)")
    args = ap.parse_args(argv)
    try:
        exe = find_ncu(args.ncu)
    except TcAdvisorError as exc:
        print(f"tcadvisor: error: {exc}", file=sys.stderr)
        return 2
    print(f"{exe}: {version(exe)}")
    print(candidates_report(query_metrics(exe)))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
