"""EBISU, ConvStencil and LoRAStencil beside the bundled kernels at their best depth, in one run.

Issue 21, target 5: the bundled kernels against every public code of the issue's table, measured side by side.
SPIDER has its own script (``spider_side_by_side.py``).

    python benchmarks/public_codes_side_by_side.py --out DIR [--ebisu SRC] [--convstencil BUILD [BUILD ...]]
        [--lorastencil BUILD [BUILD ...]] [--repeats 3] [--public-budget-s 240] [--budget-s 180]

The public programs are the user's builds from the codes' own sources and build settings (this script fetches
and builds nothing): ``--ebisu`` is EBISU's source tree after its own CMake build (binaries under
``2dstencil/build/init`` and ``3dstencil/build/init``), ``--convstencil`` and ``--lorastencil`` the CMake build
folders holding ``convstencil_2d``/``_3d`` and ``lorastencil_2d``/``_3d`` (several builds of a code are run in
turn, each named by its folder).  A code left out is not run.

What each public program counts, so that every figure is points x base stencil steps per second:

- EBISU (CUDA cores, double; ``--fp32``): one base step per iteration, interior points; its depth is fixed at
  compile time per stencil and precision.  It prints one tab-separated line whose last two fields are ms and
  GCells/s.  It fills the GPU with one block per multiprocessor and ``ceil(width_x / tile)`` tiles per row, so
  its throughput depends on the width: each case runs at the grid of the bundled kernels (10240 wide, or the
  nearest size it accepts) and at the width that gives 44 tiles, which fill 132 multiprocessors (3 rows of 44);
  the best is kept.  Its 2D box kernel writes past its rows unless width_y is a multiple of the grid's rows, so
  2D runs use width_y = 10242.  Its 3D kernel is a cooperative launch (tiles <= multiprocessors), so 512^3 in
  double is refused; 512 x 256 x 1024 (the same cells) and 384 x 352 x 992 (132 tiles) stand in.  Iterations are
  a multiple of every depth (EBISU runs whole depths and reports the iterations asked for).  Its own check
  (``--check``, CPU reference, RMS error below 1e-5) runs first on a small grid for two depths.
- ConvStencil (Tensor Cores, double): one launch applies a 7 x 7 box (Box-2D1R fused x3, weights from
  ``--custom``: 1/9 each here; without them all zero) or a 7^3 box (Box-3D1R x3) and prints GStencil/s counting
  three base steps per launch.  Its ``star2d1r`` runs the same 7 x 7 box with zero weights, so it is not run.
- LoRAStencil (Tensor Cores, double): 2D box and star fused x3 (a rank-3 split of a symmetric 7 x 7 box; the
  25-point diamond), counted x3; 3D box one step (its weights are separable, rank 1), counted x1.
- Neither ConvStencil nor LoRAStencil checks its output by default (ConvStencil's check does not compile;
  LoRAStencil's needs another build), and both time with the host clock around their launches, no warm-up: the
  median of ``--repeats`` runs is kept, with ``CUDA_MODULE_LOADING=EAGER``.

The bundled kernels run every depth their unit allows (``gpu_session_kernels.depths``), each first checked sweep
by sweep against the float64 reference on an odd grid, then timed on 10240^2 / 512^3 (median of 5); the best
correct depth is compared.  Writes public.csv (every public run), kernels.csv (every bundled run), ceilings.yaml
and summary.md into --out and prints the summary last.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcadvisor.stencil import parse_stencil  # noqa: E402

#: EBISU's programs: (stencil, dtype, program under the source tree, extra flags, [(size label, size args)],
#: check args).  Widths of 44 tiles: tile = 256 - 2 x depth (2D, radius 1), depths 6/8 (box), 12/9 (star).
EBISU_2D = "2dstencil/build/init"
EBISU_3D = "3dstencil/build/init"
EBISU = [
    ("Box-2D1R", "double", f"{EBISU_2D}/2d9pt/2d9pt_ebisu.exe", [],
     [("10240x10242", ["10242", "10240"]), ("10736x10242", ["10242", "10736"])], ["2044", "2048", "--iter=12"]),
    ("Box-2D1R", "float", f"{EBISU_2D}/2d9pt/2d9pt_ebisu.exe", ["--fp32"],
     [("10240x10242", ["10242", "10240"]), ("10560x10242", ["10242", "10560"])], ["2044", "2048", "--iter=16"]),
    ("Star-2D1R", "double", f"{EBISU_2D}/2d5pt/2d5pt_ebisu.exe", [],
     [("10240x10242", ["10242", "10240"]), ("10208x10242", ["10242", "10208"])], ["2044", "2048", "--iter=24"]),
    ("Star-2D1R", "float", f"{EBISU_2D}/2d5pt/2d5pt_ebisu.exe", ["--fp32"],
     [("10240x10242", ["10242", "10240"]), ("10472x10242", ["10242", "10472"])], ["2044", "2048", "--iter=18"]),
    ("Box-3D1R", "double", f"{EBISU_3D}/3d27pt/3d27pt_ebisu.exe", [],
     [("512x256x1024", ["512", "256", "1024"]), ("384x352x992", ["384", "352", "992"])],
     ["384", "352", "64", "--iter=10"]),
    ("Box-3D1R", "float", f"{EBISU_3D}/3d27pt/3d27pt_ebisu.exe", ["--fp32"],
     [("512x512x512", ["512", "512", "512"]), ("768x352x496", ["768", "352", "496"])],
     ["512", "512", "64", "--iter=12"]),
]
EBISU_ITER = {2: "--iter=1008", 3: "--iter=120"}  # multiples of every depth (2D 6, 8, 9, 12; 3D 5, 6)
#: ConvStencil and LoRAStencil: (code, stencil, program, args, stdin, base steps counted per launch).
TENSOR_CODES = [
    ("ConvStencil", "Box-2D1R", "convstencil_2d", ["box2d1r", "10240", "10240", "100", "--custom"],
     " ".join(["0.111111111111"] * 9) + "\n", 3),
    ("ConvStencil", "Box-3D1R", "convstencil_3d", ["box3d1r", "512", "512", "512", "34"], None, 3),
    ("LoRAStencil", "Box-2D1R", "lorastencil_2d", ["box2d1r", "10240", "10240", "100"], None, 3),
    ("LoRAStencil", "Star-2D1R", "lorastencil_2d", ["star2d1r", "10240", "10240", "100"], None, 3),
    ("LoRAStencil", "Box-3D1R", "lorastencil_3d", ["box3d1r", "512", "512", "512", "100"], None, 1),
]
#: The bundled kernels compared: (stencil, unit, dtype).
BUNDLED = [("Box-2D1R", "cuda_core", "double"), ("Box-2D1R", "cuda_core", "float"),
           ("Star-2D1R", "cuda_core", "double"), ("Star-2D1R", "cuda_core", "float"),
           ("Box-3D1R", "cuda_core", "double"), ("Box-3D1R", "cuda_core", "float"),
           ("Box-2D1R", "tensor_core", "double"), ("Star-2D1R", "tensor_core", "double"),
           ("Box-3D1R", "tensor_core", "double")]
PUBLIC_COLUMNS = ["gpu", "date", "code", "stencil", "dtype", "unit", "size", "run", "gstencils", "ms", "depth",
                  "grid_blocks", "blocks_per_sm", "returncode", "command"]
TARGET = 1.3


def parse_ebisu(text: str) -> dict:
    """EBISU's result line: tab-separated, ``ptx sizeof/4 Wx Wy [H] iter depth bdim tile|ILP <gx,gy,gz> blk/SM
    smem smrange ms GCells/s``.  Raises if the run reported a CUDA failure (it still prints a line then)."""
    if "Cuda failure" in text:
        raise RuntimeError("EBISU reported a CUDA failure: " + text[text.index("Cuda failure"):][:200])
    lines = [ln for ln in text.splitlines() if re.match(r"^\d+\t[12]\t", ln)]
    if not lines:
        raise RuntimeError("no EBISU result line in: " + text[-300:])
    f = [v for v in lines[-1].split("\t") if v != ""]
    grid = next(i for i, v in enumerate(f) if v.startswith("<"))
    return {"gstencils": float(f[-1]), "ms": float(f[-2]), "depth": int(f[grid - 3]), "grid_blocks": f[grid],
            "blocks_per_sm": f[grid + 1]}


def parse_gstencil(text: str) -> float:
    """ConvStencil's and LoRAStencil's ``GStencil/s = X`` (the last one printed)."""
    found = re.findall(r"GStencil/s = ([0-9.eE+-]+)", text)
    if not found:
        raise RuntimeError("no 'GStencil/s = ' line in: " + text[-300:])
    value = float(found[-1])
    if not value > 0 or value > 1e5:  # LoRAStencil's 2D launches are unchecked: a failed one prints nonsense
        raise RuntimeError(f"implausible throughput {value} GStencil/s")
    return value


def run_program(cmd: list[str], stdin: str | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUDA_MODULE_LOADING="EAGER")
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout, env=env)


class PublicRuns:
    """The public programs' runs, written to public.csv after each one, and the time they may take."""

    def __init__(self, out: str, base: dict, repeats: int, budget_s: float):
        self.path, self.base, self.repeats = os.path.join(out, "public.csv"), base, repeats
        self.deadline = time.time() + budget_s
        self.rows: list[dict] = []
        self.checks: list[str] = []
        self.skipped: list[str] = []

    def over_budget(self, what: str) -> bool:
        if time.time() > self.deadline:
            self.skipped.append(what)
            return True
        return False

    def add(self, row: dict) -> None:
        from benchmarks.gpu_session_kernels import write_rows

        self.rows.append(dict(self.base, **row))
        write_rows(self.path, PUBLIC_COLUMNS, self.rows)


def run_ebisu(src: str, runs: PublicRuns) -> None:
    for stencil, dtype, prog, flags, sizes, check_args in EBISU:
        path = os.path.join(src, prog)
        if not os.path.exists(path):
            runs.checks.append(f"EBISU {stencil} {dtype}: {path} missing, not run")
            continue
        if runs.over_budget(f"EBISU {stencil} {dtype}"):
            continue
        proc = run_program([path, *check_args, *flags, "--check"])
        rms = re.findall(r"RMS Error\s*:\s*(\S+)", proc.stdout)
        ok = proc.returncode == 0 and bool(rms) and "Cuda failure" not in proc.stdout + proc.stderr
        runs.checks.append(f"EBISU {stencil} {dtype} --check {' '.join(check_args)}: rc {proc.returncode}, "
                      f"RMS error {rms[-1] if rms else 'not printed'} -> {'passed' if ok else 'FAILED'}")
        print(runs.checks[-1], flush=True)
        dims = parse_stencil(stencil).dims
        for label, size in sizes:
            for i in range(runs.repeats):
                cmd = [path, *size, EBISU_ITER[dims], *flags]
                proc = run_program(cmd)
                row = dict(code="EBISU", stencil=stencil, dtype=dtype, unit="cuda_core", size=label, run=i,
                           returncode=proc.returncode, command=" ".join([prog, *cmd[1:]]))
                try:
                    row.update(parse_ebisu(proc.stdout + proc.stderr))
                except (RuntimeError, StopIteration, ValueError, IndexError) as exc:
                    print(f"EBISU {stencil} {dtype} {label}: {exc}", flush=True)
                    row["gstencils"] = ""
                runs.add(row)
                print(f"EBISU {stencil:>9} {dtype:>6} {label:>13}: {row['gstencils'] or 'failed'} GCells/s "
                      f"(depth {row.get('depth', '?')}, grid {row.get('grid_blocks', '?')})", flush=True)


def build_label(code: str, folder: str, several: bool) -> str:
    """The code's name, with its build's folder (the one above the CMake build folder) where several are run."""
    return f"{code} ({os.path.basename(os.path.dirname(os.path.abspath(folder)))})" if several else code


def run_tensor_codes(folders: dict, runs: PublicRuns) -> None:
    """``folders``: code -> the build folders to run (one build per folder: e.g. one for sm_90, one keeping the
    code's own sm_80 target, whose PTX the driver compiles)."""
    cases = [(build_label(c, f, len(folders.get(c) or []) > 1), f, st, prog, args, stdin, counted)
             for c, st, prog, args, stdin, counted in TENSOR_CODES for f in folders.get(c) or []]
    for code, folder, stencil, prog, args, stdin, counted in cases:
        if runs.over_budget(f"{code} {stencil}"):
            continue
        path = os.path.join(folder, prog)
        size = "x".join([a for a in args if a.isdigit()][:-1])  # the sizes, not the launches (last number)
        for i in range(runs.repeats):
            proc = run_program([path, *args], stdin)
            row = dict(code=code, stencil=stencil, dtype="double", unit="tensor_core", size=size, run=i,
                       depth=counted, returncode=proc.returncode, command=" ".join([prog, *args]))
            try:
                if proc.returncode:
                    raise RuntimeError(f"exit status {proc.returncode}: {(proc.stderr or proc.stdout)[-300:]}")
                row["gstencils"] = parse_gstencil(proc.stdout)
            except RuntimeError as exc:
                print(f"{code} {stencil}: {exc}", flush=True)
                row["gstencils"] = ""
            runs.add(row)
            print(f"{code:>11} {stencil:>9} {size}: {row['gstencils'] or 'failed'} GStencils/s", flush=True)


def public_best(rows: list[dict], code: str, stencil: str, dtype: str):
    """(median GStencils/s, size) of the best size of one public case, or None."""
    best = None
    for size in sorted({r["size"] for r in rows if (r["code"], r["stencil"], r["dtype"]) == (code, stencil, dtype)}):
        vals = [r["gstencils"] for r in rows if (r["code"], r["stencil"], r["dtype"], r["size"]) ==
                (code, stencil, dtype, size) and r["gstencils"] != ""]
        if vals and (best is None or statistics.median(vals) > best[0]):
            best = (statistics.median(vals), size)
    return best


def summary(public: list[dict], kernels: list[dict], checks: list[str], device: str, date: str) -> str:
    lines = [f"# Public codes and the bundled kernels side by side ({device}, {date})", "",
             "Written by `benchmarks/public_codes_side_by_side.py`.  GStencils/s = points x base steps / s.  "
             "Public code: median of its runs at its best size; bundled: the best correct depth of the scan "
             f"(median of 5).  Target of issue 21: {TARGET}x.", "",
             "| stencil | unit | precision | public code | its best | size | bundled best | depth | ratio | "
             f"met ({TARGET}x) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for code, stencil, dtype, unit in sorted({(r["code"], r["stencil"], r["dtype"], r["unit"]) for r in public},
                                             key=lambda k: (k[3], k[1], k[2], k[0])):
        pub = public_best(public, code, stencil, dtype)
        mine = [r for r in kernels if r["stencil"] == stencil and r["unit"] == unit and r["dtype"] == dtype
                and r["correct"]]
        if pub is None:
            lines.append(f"| {stencil} | {unit} | {dtype} | {code} | failed | | | | | |")
            continue
        best = max(mine, key=lambda r: r["gstencils"]) if mine else None
        ratio = best["gstencils"] / pub[0] if best else float("nan")
        lines.append(f"| {stencil} | {unit} | {dtype} | {code} | {pub[0]:.0f} | {pub[1]} | "
                     f"{best['gstencils']:.0f} | {best['fuse']} | {ratio:.2f} | {ratio >= TARGET} |"
                     if best else f"| {stencil} | {unit} | {dtype} | {code} | {pub[0]:.0f} | {pub[1]} | not run "
                     "| | | |")
    wrong = [r for r in kernels if not r["correct"]]
    lines += ["", f"Bundled runs: {len(kernels)}, {len(kernels) - len(wrong)} correct."]
    if checks:
        lines += ["", "EBISU's own checks (small grids):", ""] + [f"- {c}" for c in checks]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--ebisu", help="EBISU's source tree, built with its own CMake settings")
    ap.add_argument("--convstencil", nargs="+", default=[], help="folders of convstencil_2d and convstencil_3d")
    ap.add_argument("--lorastencil", nargs="+", default=[], help="folders of lorastencil_2d and lorastencil_3d")
    ap.add_argument("--ceilings", help="spec file of measured peaks (default: by the GPU's name)")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each public program and size")
    ap.add_argument("--sweeps", type=int, default=4, help="sweeps per timed repetition of a bundled kernel")
    ap.add_argument("--public-budget-s", type=float, default=240, help="stop starting public cases after this long")
    ap.add_argument("--budget-s", type=float, default=180, help="stop starting bundled runs after this long")
    ap.add_argument("--units", nargs="+", choices=["cuda_core", "tensor_core"], default=["cuda_core", "tensor_core"],
                    help="the bundled units scanned")
    args = ap.parse_args(argv)
    args.repeats_bundled = 5
    os.makedirs(args.out, exist_ok=True)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    from benchmarks.gpu_session_kernels import Session, depths, start_session
    from tcadvisor.gpu.backend import device_info

    name = device_info()["name"]
    ceilings = args.ceilings or os.path.join(here, "hwspecs", "h200-calibrated.yaml" if "H200" in name
                                             else "h100-sxm-measured.yaml")
    cp, device, _, _, spec, date = start_session(args.out, ceilings)
    runs = PublicRuns(args.out, {"gpu": device, "date": date}, args.repeats, args.public_budget_s)
    if args.ebisu:
        run_ebisu(args.ebisu, runs)
    run_tensor_codes({"ConvStencil": args.convstencil, "LoRAStencil": args.lorastencil}, runs)

    bundled_args = argparse.Namespace(out=args.out, repeats=args.repeats_bundled, sweeps=args.sweeps,
                                      budget_s=args.budget_s)
    session = Session(bundled_args, spec, device)
    for stencil, unit, dtype in (b for b in BUNDLED if b[1] in args.units):
        st = parse_stencil(stencil)
        session.scan(stencil, unit, dtype, depths(unit, st.radius, False, st.dims))
    session.flush()
    text = summary(runs.rows, session.rows, runs.checks, device, date)
    skipped = runs.skipped + session.skipped
    if skipped:
        text += f"\n\nNot run (time budget): {', '.join(skipped)}"
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(text + "\n")
    print(f"\n{time.time() - session.start:.0f} s of bundled runs\n\n{text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
