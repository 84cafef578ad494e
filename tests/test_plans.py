"""The CPU launch planner: it reproduces every recorded launch, the kernels' own layout, and the occupancy rules."""
import csv
import os
import re
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

from tcadvisor.errors import TcAdvisorError
from tcadvisor.gpu import plans
from tcadvisor.hardware import find_spec
from tcadvisor.hardware_schema import load_spec_file
from tcadvisor.mma import MmaShape
from tcadvisor.stencil import Stencil, parse_stencil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = [os.path.join(ROOT, "validation", "results", d) for d in ("h100-sxm-2026-11-23", "h200-2026-11-23")]
H100 = find_spec("h100-calibrated").multiprocessors


def recorded_runs(folder=RESULTS[0]):
    with open(os.path.join(folder, "results.csv")) as f:
        return [row for row in csv.DictReader(f) if row["status"] == "ok"]


def plan_of(row):
    st = parse_stencil(row["stencil"])
    fuse, precision = int(row["fuse"]), row["precision"]
    if row["unit"] == "cuda_core":  # the configuration the run printed (defaults have moved since)
        return plans.recorded_cuda_core_plan(st, fuse, precision, row["kernel"])
    if row["unit"] == "tensor_core":  # likewise
        plan = plans.recorded_tensor_core_plan(st, fuse, precision, row["kernel"])
        assert str(plan.mma) == row["mma"]
        return plan
    return plans.recorded_sparse_tensor_core_plan(st, fuse, precision, row["kernel"])


def registers_of(row) -> int:
    return int(re.search(r"(\d+) registers", row["kernel"]).group(1))


# --------------------------------------------------------------------------- the recorded launches


@pytest.mark.parametrize("folder", RESULTS)
def test_the_plan_is_the_launch_every_recorded_run_made(folder):
    """Threads, columns, halo and shared memory (CUDA cores); chunks, rows, warps, where the weights live and the
    prefetch (Tensor Cores): what the kernel printed about itself on the GPU, from the plan alone."""
    for row in recorded_runs(folder):
        plan, text = plan_of(row), row["kernel"]
        if plan.unit == "cuda_core":
            if plan.dims <= 2:
                layout = f"{plan.threads} threads x {plan.options['v']} columns, {plan.options['nr']} rows/iteration"
            else:
                layout = f"{plan.block[0]}x{plan.block[1]} threads x {plan.options['v']} columns"
            assert text.startswith(f"{layout}, halo {plan.halo}, {plan.smem // 1024} KiB shared"), (row, text)
        elif plan.unit == "tensor_core":
            where = "registers" if plan.options["bregs"] else "L1"
            assert (f"{plan.options['kch']} K-chunk(s) x {plan.options['rows']} kernel rows, {plan.warps} warps/block, "
                    f"weights in {where}, prefetch {plan.options['prefetch']}") in text, text
        else:
            where = "registers" if plan.options["aregs"] else "L1"
            assert (f"{plan.options['kc']} K-chunk(s) x {plan.options['rows']} kernel lines, {plan.warps} warps/block, "
                    f"weights in {where}, prefetch {plan.options['prefetch']}") in text, text


def test_executed_flops_are_the_recorded_counts():
    """The sweep's FLOPs (halos, padding, pipeline start-up) as the kernel counted them on the GPU: the plan's
    launch split with the resident blocks the compiled kernel had (from its recorded register count)."""
    for row in recorded_runs():
        plan = plan_of(row)
        st = parse_stencil(row["stencil"])
        grid = tuple(int(v) for v in row["grid"].split("x"))
        shape3 = (1,) * (3 - st.dims) + grid
        slots = H100.count * plan.occupancy(H100, registers_of(row)).blocks
        per_point = plan.executed_flops(shape3, slots) / np.prod(shape3)
        assert per_point == pytest.approx(float(row["executed_flops_per_point"]), rel=1e-9), row["kernel"]


def test_register_estimate_against_the_compiled_counts():
    """The estimate is documented as such: close to the compiler's counts, and the occupancy it gives mostly right
    (docs/model.md, "Registers": the misses are the deep CUDA-core kernels, whose counts the compiler varies
    by up to 50 registers from one depth to the next)."""
    rows = recorded_runs()
    diffs, same = [], 0
    for row in rows:
        plan = plan_of(row)
        diffs.append(abs(plan.registers - registers_of(row)))
        same += plan.occupancy(H100).blocks == plan.occupancy(H100, registers_of(row)).blocks
    assert np.median(diffs) <= 8 and same / len(rows) >= 0.7, (np.median(diffs), same / len(rows))


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a C++ compiler")
@pytest.mark.parametrize("source, macro, defines, plan", [
    ("cuda_cores_2d.cu", "ROWBUF", dict(K_REAL="double", K_RX=1, K_RY=1, K_T=3, K_STAR=0, K_V=2, K_NT=128, K_NR=2),
     lambda: plans.plan_cuda_cores(Stencil.box(2, 1), 3, "fp64")),
    ("cuda_cores_2d.cu", "ROWBUF", dict(K_REAL="float", K_RX=2, K_RY=2, K_T=5, K_STAR=1, K_V=2, K_NT=256, K_NR=2),
     lambda: plans.plan_cuda_cores(Stencil.star(2, 2), 5, "fp32")),
    ("cuda_cores_2d.cu", "ROWBUF", dict(K_REAL="float", K_RX=3, K_RY=0, K_T=7, K_STAR=0, K_V=2, K_NT=256, K_NR=2),
     lambda: plans.plan_cuda_cores(Stencil.box(1, 3), 7, "fp32", layout="stream")),
    ("cuda_cores_3d.cu", "PLANEBUF", dict(K_REAL="double", K_R=1, K_T=5, K_STAR=0, K_V=4, K_BX=16, K_BY=32),
     lambda: plans.plan_cuda_cores(Stencil.box(3, 1), 5, "fp64", v=4, cols=64, rows=32)),
    ("cuda_cores_3d.cu", "PLANEBUF", dict(K_REAL="float", K_R=1, K_T=4, K_STAR=0, K_V=4, K_BX=34, K_BY=12, K_W=2),
     lambda: plans.plan_cuda_cores(Stencil.box(3, 1), 4, "fp32", v=4, cols=136, rows=24, rows_per_thread=2)),
    # FP16/BF16 pairs: 32-bit words of two values in shared memory, laid out as FP32's
    ("cuda_cores_2d.cu", "ROWBUF", dict(K_PAIR=1, K_RX=1, K_RY=1, K_T=4, K_STAR=0, K_V=2, K_NT=128, K_NR=2, K_VEC2=1),
     lambda: plans.plan_cuda_cores(Stencil.box(2, 1), 4, "fp16", async_copy=False)),
    # with the rows copied (planar): the same row buffers, the ring of K_PF + 1 input rows
    ("cuda_cores_2d.cu", "ROWBUF", dict(K_PAIR=1, K_RX=1, K_RY=1, K_T=4, K_STAR=0, K_V=4, K_NT=128, K_NR=2, K_ASYNC=1,
                                        K_PF=4, K_VEC2=1),
     lambda: plans.plan_cuda_cores(Stencil.box(2, 1), 4, "fp16")),
    ("cuda_cores_3d.cu", "PLANEBUF", dict(K_PAIR=2, K_R=1, K_T=2, K_STAR=0, K_V=2, K_BX=32, K_BY=16, K_VEC2=1),
     lambda: plans.plan_cuda_cores(Stencil.box(3, 1), 2, "bf16")),
])
def test_shared_memory_layout_is_the_kernels(source, macro, defines, plan):
    """The CUDA file's own layout macros, compiled on the host, give the planner's row and plane buffers."""
    p = plan()
    assert {k: str(v) for k, v in p.defines}.items() >= {k: str(v) for k, v in defines.items()}.items()
    lines = [line for line in open(os.path.join(ROOT, "kernels", source))
             if re.match(r"^(typedef|#define [A-Z_]+ )", line) and not line.rstrip().endswith("\\")
             and not line.startswith("#define K_")]  # the kernel's #ifndef defaults: given with -D here
    # the value type comes from kernels/cc_values.cuh (real: K_REAL, or a 32-bit word of a K_PAIR)
    header = ("#include <cmath>\n#define __device__\n#define __forceinline__ inline\n#define TCADVISOR_HOST_EMU 1\n"
              "namespace emu { inline unsigned fma_16x2(bool, unsigned a, unsigned, unsigned) { return a; } }\n"
              '#include "cc_values.cuh"\n')
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "layout.cpp")
        with open(src, "w") as f:
            f.write("#include <cstdio>\n" + header + "".join(lines)
                    + f'int main() {{ printf("%d", (int)({macro})); }}\n')
        exe = os.path.join(tmp, "layout")
        optional = {"K_W": 1} if source == "cuda_cores_3d.cu" else {}  # the kernel's #ifndef defaults
        subprocess.run(["g++", f"-I{os.path.join(ROOT, 'kernels')}", *[f"-D{k}={v}" for k, v in {**optional, **defines}.items()],
                        "-o", exe, src], check=True)
        value = int(subprocess.run([exe], capture_output=True, text=True, check=True).stdout)
    assert value == p.options[macro.lower()]
    size = 8 if defines.get("K_REAL") == "double" else 4
    if macro == "ROWBUF":  # a ring of K_PF + 1 input rows, two of each later step's and of the finished rows
        buffers = defines.get("K_PF", 1) + 1 + 2 * defines["K_T"]
        assert p.smem == buffers * defines["K_NR"] * value * size
    else:
        assert p.smem == defines["K_T"] * 2 * value * size


# --------------------------------------------------------------------------- occupancy and capacity


def test_occupancy_follows_shared_memory_registers_and_threads():
    """Box-2D1R double on CUDA cores, with the registers the compiler gave the H100 runs (results.csv):
    t = 6 (two rows per iteration, 59.5 KiB) fits 3 blocks in 228 KiB; t = 7 (one row, 34 KiB) 6, the
    step the depth sweep measured (589 -> 693 GStencils/s); t = 13 -> 14 (128 -> 178 registers) drops
    from 3 blocks to 2, the registers binding (698 -> 584 measured)."""
    # the configurations of those runs: rows through registers, staged outputs (the defaults before 2026-11-24)
    t6, t7 = (plans.plan_cuda_cores(Stencil.box(2, 1), t, "fp64", async_copy=False, direct_store=False)
              for t in (6, 7))
    assert t6.options["nr"] == 2 and t7.options["nr"] == 1 and t7.smem < t6.smem
    assert t6.occupancy(H100, 80).blocks == 3 and t6.occupancy(H100, 80).limiter == "shared memory"
    assert t7.occupancy(H100, 80).blocks == 6
    t14 = plans.plan_cuda_cores(Stencil.box(2, 1), 14, "fp64", async_copy=False, direct_store=False)
    assert t14.occupancy(H100, 128).blocks == 3 and t14.occupancy(H100, 128).limiter == "shared memory"
    assert t14.occupancy(H100, 178).blocks == 2 and t14.occupancy(H100, 178).limiter == "registers"
    # registers: 255 per thread leave room for 2 blocks of 128 threads (8 warps); 64 for 8 blocks of 128
    tc = plans.plan_tensor_cores(Stencil.box(2, 1), 7, "fp64", MmaShape(16, 8, 8))
    assert tc.occupancy(H100, 255).warps == 8 and tc.occupancy(H100, 255).limiter == "registers"
    assert plans.occupancy(128, 64, 0, H100).blocks == 8
    assert plans.occupancy(1024, 32, 0, H100).blocks == 2 and plans.occupancy(1024, 32, 0, H100).limiter == "threads"
    assert plans.occupancy(128, 32, 228 * 1024, H100).blocks == 0  # beyond what one block may use


def test_launch_bounds_cap_the_register_estimate():
    wide = plans.plan_cuda_cores(Stencil.box(3, 1), 5, "fp64", v=4, cols=64, rows=32)  # at most 128 registers
    assert wide.threads == 512 and wide.register_cap == 128 and wide.registers <= 128
    assert wide.occupancy(H100).blocks == 1


def test_planner_refuses_what_the_kernel_cannot_build():
    with pytest.raises(TcAdvisorError, match="too wide"):
        plans.plan_cuda_cores(Stencil.box(3, 2), 8, "fp64", v=4, cols=64, rows=32)
    with pytest.raises(TcAdvisorError, match="would spill to local memory"):
        plans.plan_cuda_cores(Stencil.box(3, 2), 8, "fp64")
    with pytest.raises(TcAdvisorError, match="FP64, FP32, FP16, BF16, not TF32"):
        plans.plan_cuda_cores(Stencil.box(2, 1), 1, "tf32")
    with pytest.raises(TcAdvisorError, match="v = 1 columns per thread, an even number would be accepted"):
        plans.plan_cuda_cores(Stencil.box(2, 1), 4, "fp16", async_copy=True, v=1, cols=256)
    with pytest.raises(TcAdvisorError, match="0, 1 or 2"):
        plans.plan_sparse_tensor_cores(Stencil.box(2, 1), 1, "fp16", prefetch=3)


def test_tensor_core_plans_count_the_rows_the_operands_have():
    """Rows x chunks per slice: the rowband construction's, for a box and a 3D star (empty kernel rows skipped)."""
    from tcadvisor.reference import fused_weights, random_weights
    from tcadvisor.transforms import rowband

    for st, t in ((Stencil.box(2, 1), 3), (Stencil.star(3, 1), 2), (Stencil.box(1, 2), 2)):
        shape = MmaShape(16, 8, 8)
        con = rowband.construct(fused_weights(random_weights(st.mask(), np.random.default_rng(0)), t), shape)
        plan = plans.plan_tensor_cores(st, t, "fp64", shape)
        assert plan.options["rows"] == len(con.details["rows"]) and plan.options["kch"] == con.details["chunks"]
        assert plan.mma_per_slice == plan.options["rows"] * plan.options["kch"]


def test_tensor_core_memory_knobs():
    """L2 prefetch and shared-memory weights: off, the kernel compiles as before; on, the shared memory a block
    asks for is one copy of every weight fragment (32 lanes each), and contradictory or out-of-range knobs fail."""
    st, shape = Stencil.box(3, 1), MmaShape(16, 8, 4)
    plain = plans.plan_tensor_cores(st, 2, "fp64", shape, warps=4)  # a knob given: the others plain
    assert not {"K_L2PF", "K_BSMEM"} & set(dict(plain.defines)) and plain.smem == 0
    assert plain.defines == plans.plan_tensor_cores(st, 2, "fp64", shape, l2_prefetch=0, weights_shared=False).defines
    shared = plans.plan_tensor_cores(st, 2, "fp64", shape, weights_shared=True, l2_prefetch=3)
    d = dict(shared.defines)
    assert d["K_BSMEM"] == 1 and d["K_L2PF"] == 3 and d["K_BREGS"] == 0
    kch = shared.options["kch"]
    assert shared.smem == 25 * kch * 32 * 8 == 19200  # 5 x 5 rows x 3 chunks, one double per lane (k = 4)
    assert shared.live_words < plain.live_words
    half = plans.plan_tensor_cores(st, 1, "fp16", MmaShape(16, 8, 16), weights_shared=True)
    assert half.smem == 9 * 1 * 32 * 2 * 4  # 3 x 3 rows, one chunk, two 32-bit words per lane
    with pytest.raises(TcAdvisorError, match="bregs must be off"):
        plans.plan_tensor_cores(st, 1, "fp64", shape, bregs=True, weights_shared=True)
    with pytest.raises(TcAdvisorError, match="l2_prefetch = 40"):
        plans.plan_tensor_cores(st, 1, "fp64", shape, l2_prefetch=40)


def test_tensor_core_stages_are_slices_in_shared_memory():
    """``stages``: each slice's strips staged by cp.async, 2-8 slices per warp after the weights in the block's shared
    memory (3D: a slice's ni + ir - 1 rows each), nothing loaded ahead into registers; the kernel's description gives
    the plan back.  Refused in one line beside slices ahead and out of range."""
    from tcadvisor.gpu.plans import recorded_tensor_core_plan

    st, shape = Stencil.box(1, 3), MmaShape(16, 8, 16)
    plain = plans.plan_tensor_cores(st, 16, "fp16", shape, prefetch=0)
    staged = plans.plan_tensor_cores(st, 16, "fp16", shape, stages=3)
    d = dict(staged.defines)
    assert d["K_STAGES"] == 3 and d["K_PF"] == 0 and "K_STAGES" not in dict(plain.defines)
    # a strip of 128 - 8 + 112 halves: 464 bytes, copied in 16-byte chunks from the boundary below its origin
    assert plans.tc_stage_bytes(128 - 8 + 112, 2) == 480 and staged.smem == plain.smem + 4 * 3 * 480
    assert staged.options["stages"] == 3 and plain.options["stages"] == 0
    text = (f"{shape} FP16, α = 97/112 (0.866), 7 K-chunk(s) x 1 kernel rows, 4 warps/block, weights in registers, "
            "prefetch 0, the line as rows, 512 points per block, compiled for its fields' alignment, 3 stages in "
            "shared memory, min 1 blocks/SM, 56 registers")
    assert recorded_tensor_core_plan(st, 16, "fp16", text).defines == staged.defines
    assert recorded_tensor_core_plan(st, 16, "fp16", text.replace("3 stages in shared memory, ", "")).defines \
        == plain.defines
    for kwargs, message in (
            ({"stages": 9}, r"^stages 9: the Tensor Core kernel stages 2 to 8 slices in shared memory \(0 or none: "
                            r"no stages\)$"),
            ({"stages": 1}, r"^stages 1: the Tensor Core kernel stages 2 to 8"),
            ({"stages": True}, r"^stages True: the Tensor Core kernel stages 2 to 8"),
            ({"stages": 2, "prefetch": 1}, r"^stages 2 with prefetch 1: staged strips are the slices in flight, so "
                                           r"the Tensor Core kernel loads none ahead into registers \(prefetch 0\)$")):
        with pytest.raises(TcAdvisorError, match=message):
            plans.plan_tensor_cores(st, 16, "fp16", shape, **kwargs)
    # 2D: one row per slice, its strip of 128 - 8 + 16 halves (R = 2) in 288 bytes; 3D with two inner rows: the
    # slice's 3 + 1 rows, FP64 on m16n8k4 (K_pad 12: 132 doubles, 1056 bytes, from the 16-byte boundary below their
    # origin: 1072), each row a multiple of 16 bytes
    flat = plans.plan_tensor_cores(Stencil.box(2, 1), 2, "fp16", shape, prefetch=0)
    flat_staged = plans.plan_tensor_cores(Stencil.box(2, 1), 2, "fp16", shape, stages=2)
    assert flat_staged.smem == flat.smem + 4 * 2 * 288 and dict(flat_staged.defines)["K_STAGES"] == 2
    deep = plans.plan_tensor_cores(Stencil.box(3, 1), 1, "fp64", MmaShape(16, 8, 4), inner_rows=2, prefetch=0)
    deep_staged = plans.plan_tensor_cores(Stencil.box(3, 1), 1, "fp64", MmaShape(16, 8, 4), inner_rows=2, stages=3)
    assert plans.tc_stage_bytes(128 - 8 + 12, 8) == 1072
    assert deep_staged.smem == deep.smem + 4 * 3 * 4 * 1072 and deep_staged.options["prefetch"] == 0


def test_2d_3d_defaults_stage_slices_by_fused_radius_within_99_kib():
    """``tensor_cores_stages`` of kernels/defaults.yaml: the defaults stage 2D/3D slices by fused radius (BF16 as
    FP16), with nothing ahead in registers and no L2 prefetch; none beyond the listed radii, none for FP64 in 3D, and
    none where the block's shared memory would pass 99 KiB.  3D TF32 at r·t = 3 and FP16 at 2 stage in blocks of 4
    warps (their entries' 8 would need 112 KiB and more at TF32 r·t = 3)."""
    def default(st, t, precision, shape):
        o = plans.plan_tensor_cores(st, t, precision, shape).options
        return o["stages"], o["prefetch"], o["l2_prefetch"]

    def warps(st, t, precision, shape):
        return plans.plan_tensor_cores(st, t, precision, shape).warps

    k16, k8, k4 = MmaShape(16, 8, 16), MmaShape(16, 8, 8), MmaShape(16, 8, 4)
    assert default(Stencil.box(2, 1), 4, "fp16", k16) == (4, 0, 0) == default(Stencil.box(2, 2), 2, "bf16", k16)
    assert default(Stencil.box(2, 1), 5, "fp16", k16)[0] == 0
    assert default(Stencil.star(2, 1), 1, "tf32", k4) == (2, 0, 0) and default(Stencil.box(2, 1), 4, "tf32", k8)[0] == 4
    assert default(Stencil.box(2, 1), 1, "fp64", k4)[0] == 3 and default(Stencil.box(2, 1), 2, "fp64", k4)[0] == 0
    assert default(Stencil.box(3, 1), 2, "fp16", k16)[0] == 3 and default(Stencil.box(3, 1), 1, "fp16", k16)[0] == 0
    assert default(Stencil.star(3, 1), 2, "tf32", k4)[0] == 2 and default(Stencil.box(3, 1), 2, "fp64", k4)[0] == 0
    assert default(Stencil.star(3, 3), 1, "tf32", k8) == (2, 0, 0) == default(Stencil.box(3, 1), 3, "tf32", k8)
    assert warps(Stencil.star(3, 3), 1, "tf32", k8) == 4 == warps(Stencil.box(3, 1), 2, "fp16", k16)
    assert plans.plan_tensor_cores(Stencil.star(3, 3), 1, "tf32", k8).smem <= 99 * 1024
    assert default(Stencil.box(3, 1), 4, "tf32", k8)[0] == 0 and default(Stencil.box(3, 1), 3, "fp16", k16)[0] == 3
    assert warps(Stencil.box(3, 1), 3, "fp16", k16) == 4 and warps(Stencil.box(3, 1), 2, "tf32", k4) == 4
    assert plans.tc_stages(3, "tf32", 3) == 2 and plans.tc_stages(2, "tf32", 3) == 4 and plans.tc_stages(1, "tf32", 3) == 0
    assert plans.tc_stage_knobs(3, "tf32", 3) == {"stages": 2, "warps": 4} and plans.tc_stage_knobs(3, "tf32", 4) == {}
    assert plans.tc_stage_knobs(2, "fp16", 3) == {"stages": 4}


def test_instructions_per_mma_count_what_each_slice_issues():
    """n_im, the refined model's instructions per MMA (LaunchPlan.instructions_per_mma), counted by hand from the
    kernels' slice loops: the MMA and its share of the fragment loads (and TF32 conversions), of the weight loads not
    in registers, of the output row's stores and of a stage's copy, commit, wait and two warp barriers."""
    shape16 = MmaShape(16, 8, 16)
    # dense FP16 1D, r·t = 48, 2 stages: 7 chunks x 4 word loads from the stage, 2 pair stores each after its
    # conversion, 5 for the stage (one 16-byte copy per lane: 480 bytes), over 7 MMAs
    staged = plans.plan_tensor_cores(Stencil.box(1, 3), 16, "fp16", shape16, stages=2)
    assert staged.instructions_per_mma == pytest.approx(1 + (7 * 4 + 2 * 2 + 5) / 7)
    # dense TF32 1D, r·t = 4 on m16n8k8, two x tiles: 2 tiles x 2 chunks x (4 loads + 4 conversions), 2 x 2 stores,
    # over 2 x 2 MMAs
    # dense FP64 3D, r·t = 1 on m16n8k4, two inner rows, 3 stages, weights in registers: 4 input rows x 3 chunks x 2
    # loads, 2 x 2 stores, the stage's commit, wait, two barriers and one 16-byte copy per lane for each of its 4 rows
    # (1072 bytes: 67 chunks over 32 lanes, 3 for some), over 9 rows x 3 chunks x 2 MMAs
    staged_3d = plans.plan_tensor_cores(Stencil.box(3, 1), 1, "fp64", MmaShape(16, 8, 4), inner_rows=2, stages=3,
                                        bregs=True)
    assert staged_3d.instructions_per_mma == pytest.approx(1 + (24 + 4 + 4 + 4 * 3) / 54)
    tf32 = plans.plan_tensor_cores(Stencil.box(1, 1), 4, "tf32", MmaShape(16, 8, 8), x_tiles=2, prefetch=1)
    assert tf32.instructions_per_mma == pytest.approx(1 + (2 * 2 * 8 + 4) / 4)
    # dense FP64 3D, r·t = 1 on m16n8k4, weights word by word from L1: 3 input rows x 3 chunks x 2 loads, 9 rows x 3
    # chunks x 1 weight word, 2 stores, over 27 MMAs
    fp64 = plans.plan_tensor_cores(Stencil.box(3, 1), 1, "fp64", MmaShape(16, 8, 4), bregs=False,
                                   weights_shared=False)
    assert fp64.instructions_per_mma == pytest.approx(1 + (18 + 27 + 2) / 27)
    # sparse FP16 2D, r·t = 2, weights in registers: 1 chunk x (1 vector + 4 shuffles), 2 stores, over 5 MMAs
    sparse = plans.plan_sparse_tensor_cores(Stencil.box(2, 1), 2, "fp16", aregs=True, prefetch=1)
    assert sparse.instructions_per_mma == pytest.approx(1 + (5 + 2) / 5)
    # sparse TF32 3D, two inner rows, weights from L1: 4 input rows x 2 chunks x (1 + 4 shuffles + 4 conversions),
    # 9 lines x 2 fragments x 2 loads, 2 x 2 stores, over 2 x 9 x 2 MMAs
    tf32_3d = plans.plan_sparse_tensor_cores(Stencil.box(3, 1), 1, "tf32", aregs=False, inner_rows=2, prefetch=0)
    assert tf32_3d.instructions_per_mma == pytest.approx(1 + (72 + 36 + 4) / 36)
    with pytest.raises(TcAdvisorError, match="instructions per MMA are a Tensor Core plan's"):
        plans.plan_cuda_cores(Stencil.box(2, 1), 1, "fp32").instructions_per_mma


def test_calibrated_specs_carry_the_multiprocessors():
    for name in ("h100-sxm-2026-11-23", "h200-2026-11-23"):
        spec = load_spec_file(os.path.join(ROOT, "validation", "results", name, "calibrated.yaml"))
        sm = spec.multiprocessors
        assert (sm.count, sm.clock, sm.shared_memory, sm.max_warps) == (132, 1.98e9, 228 * 1024, 64)


def test_tensor_core_row_masks_take_a_second_word_beyond_64_rows():
    """K_ROWMASK / K_LINEMASK hold rows 0-63 as before; only a kernel of more than 64 rows (3D r·t = 4, 5) gets
    K_ROWMASK_HI / K_LINEMASK_HI with rows 64-127, and beyond 128 rows the planner refuses."""
    shape = MmaShape(16, 8, 16)
    for st, t in ((Stencil.box(3, 1), 3), (Stencil.star(3, 3), 1), (Stencil.box(2, 1), 8)):
        n = (2 * st.radius * t + 1) ** (st.dims - 1)
        for plan, name in ((plans.plan_tensor_cores(st, t, "fp16", shape), "K_ROWMASK"),
                           (plans.plan_sparse_tensor_cores(st, t, "fp16"), "K_LINEMASK")):
            d = dict(plan.defines)
            assert d[name] == f"{(1 << n) - 1:#x}ULL" and f"{name}_HI" not in d  # the format of before
    star = (1 << 76) | (1 << 40) | 1  # rows (8, 4), (4, 4), (0, 0) of a 9 x 9 kernel
    for plan, name in ((plans.plan_tensor_cores(Stencil.star(3, 4), 1, "fp64", shape, rowmask=star), "K_ROWMASK"),
                       (plans.plan_sparse_tensor_cores(Stencil.star(3, 4), 1, "tf32", linemask=star), "K_LINEMASK")):
        d = dict(plan.defines)
        assert (d["K_NS"], d["K_NI"]) == (9, 9) and plan.options["rows"] == 3
        assert d[name] == f"{(1 << 40) | 1:#x}ULL" and d[f"{name}_HI"] == f"{1 << 12:#x}ULL"
        keys = [k for k, _ in plan.defines]
        assert keys.index(f"{name}_HI") == keys.index(name) + 1
    full = plans.plan_tensor_cores(Stencil.box(3, 1), 5, "fp16", shape)
    assert dict(full.defines)["K_ROWMASK_HI"] == f"{(1 << 57) - 1:#x}ULL"  # 121 rows: 64 + 57
    with pytest.raises(TcAdvisorError, match="169 kernel rows: .* hold 128"):
        plans.plan_tensor_cores(Stencil.box(3, 1), 6, "fp16", shape)
    with pytest.raises(TcAdvisorError, match="hold 128"):
        plans.plan_sparse_tensor_cores(Stencil.box(3, 2), 3, "fp16")


def test_weights_of_81_rows_leave_the_registers_and_fit_shared_memory():
    """3D r·t = 4: the weight fragments of 81 rows go to shared memory (FP64 81 KiB per block at most), within
    :data:`plans.B_SMEM_LIMIT`; at r·t = 5 FP64 they would not fit every GPU and are read from L1.  The sparse
    kernel takes the scanned 3D configuration (``sparse_tensor_cores`` of kernels/defaults.yaml): weights in
    shared memory, four inner rows per warp, nothing loaded ahead; with a knob given, the rule of before
    (weights from L1 over A_REG_LIMIT, TF32 one slice ahead beyond 64 lines, two below)."""
    for st, t in ((Stencil.star(3, 4), 1), (Stencil.box(3, 1), 4)):
        for precision, shapes in (("fp64", ("m16n8k16", "m16n8k8", "m16n8k4", "m8n8k4")),
                                  ("tf32", ("m16n8k8", "m16n8k4")), ("fp16", ("m16n8k16",))):
            for s in shapes:
                plan = plans.plan_tensor_cores(st, t, precision, MmaShape.parse(s))
                assert plan.options["weights_shared"] and not plan.options["bregs"], (st.name, precision, s)
                assert 0 < plan.smem <= plans.B_SMEM_LIMIT and plan.occupancy(H100).blocks >= 1
        for precision in ("tf32", "fp16", "bf16"):
            plan = plans.plan_sparse_tensor_cores(st, t, precision)
            o = plan.options
            assert not o["aregs"] and o["weights_shared"] and (o["ir"], o["prefetch"]) == (4, 0), (st.name, precision)
            assert 0 < plan.smem <= H100.shared_memory_per_block and plan.occupancy(H100).blocks >= 1
            rule = plans.plan_sparse_tensor_cores(st, t, precision, inner_rows=1)
            assert not rule.options["aregs"] and not rule.options["weights_shared"]
            assert rule.options["prefetch"] == 1 and rule.smem == 0
    deep = plans.plan_tensor_cores(Stencil.box(3, 1), 5, "fp64", MmaShape(16, 8, 4))
    assert (deep.options["weights_shared"], deep.options["bregs"], deep.smem) == (False, False, 0)
    assert plans.plan_sparse_tensor_cores(Stencil.box(3, 1), 3, "tf32", inner_rows=1).options["prefetch"] == 2
    # 2D, a knob given: the rule (TF32: two slices ahead)
    assert plans.plan_sparse_tensor_cores(Stencil.box(2, 1), 3, "tf32", x_tiles=1).options["prefetch"] == 2


def test_3d_cuda_core_plans_are_tiles_the_compiler_does_not_spill():
    """Every 3D plan the generic rule makes for the corpus shapes (and Star-3D4R) is in the compiler's table
    (kernels/compiled-resources.csv, benchmarks/ptxas_resources.py) with at most SPILL_TOLERANCE bytes spilled;
    a depth refused for registers is one where the table shows every candidate tile spilling."""
    from tcadvisor.validate.corpus import corpus_stencils

    table = plans.compiled_resources()
    assert len(table) > 50
    checked = refused = 0
    for st in [s for s in corpus_stencils() if s.dims == 3] + [Stencil.star(3, 4), Stencil.box(3, 4)]:
        for precision in ("fp64", "fp32"):
            for t in range(1, 17):
                start = plans.cc3d_generic_tile(st, t, precision)
                if start is None:
                    continue
                try:
                    plan = plans.plan_cuda_cores(st, t, precision)
                except TcAdvisorError as exc:
                    if "spill" in str(exc):
                        reports = [table.get((p.source, plans.defines_key(p.defines)))
                                   for _, _, p in plans.cc3d_tile_candidates(st, t, precision, *start)]
                        assert all(r is not None and r[1] > plans.SPILL_TOLERANCE for r in reports), (st.name, t)
                        refused += 1
                    break
                report = table.get((plan.source, plans.defines_key(plan.defines)))
                assert report is not None and report[1] <= plans.SPILL_TOLERANCE, (st.name, precision, t, report)
                checked += 1
    assert checked > 40 and refused > 5


def test_box_3d4r_runs_on_cuda_cores_at_r_t_4_in_every_precision_with_a_bound():
    """r·t = 4 in 3D on CUDA cores (issue 21): Box-3D4R at t = 1 plans the tile the compiler's table shows not
    spilling (FP64: 255 registers, none spilled, where the register estimate alone had refused it), and t = 2 is
    refused because every candidate spills; FP16 is refused for its rounding chain (729 taps), not for capacity."""
    from tcadvisor.gpu import registry
    from tcadvisor.hardware import find_spec
    from tcadvisor.support import depth_refusal

    table = plans.compiled_resources()
    st = Stencil.box(3, 4)
    for precision in ("fp64", "fp32"):
        plan = plans.plan_cuda_cores(st, 1, precision)
        regs, spilled = table[(plan.source, plans.defines_key(plan.defines))]
        assert spilled == 0 and regs <= 255
        with pytest.raises(TcAdvisorError, match="would spill to local memory"):
            plans.plan_cuda_cores(st, 2, precision)
    gpu = find_spec("h100-calibrated")
    prof = registry.bundled_profile("cuda_core")
    assert depth_refusal(prof, st, 1, "double", "fp64", gpu) is None
    assert "no error bound" in depth_refusal(prof, st, 1, "half", "fp16", gpu)


def test_3d_planner_takes_fewer_rows_where_the_first_tile_spills():
    """Box-3D2R FP32 at t = 3: the generic first tile (64 columns x 32 rows, 512 threads, a 128-register cap)
    spills by the compiler's report; the planner takes 16 rows (256 threads) instead."""
    table = plans.compiled_resources()
    first = plans.plan_cuda_cores(Stencil.box(3, 2), 3, "fp32", v=4, cols=64, rows=32)
    assert table[(first.source, plans.defines_key(first.defines))][1] > 100
    chosen = plans.plan_cuda_cores(Stencil.box(3, 2), 3, "fp32")
    assert (chosen.options["v"], chosen.tile["y"], chosen.threads) == (4, 16, 256)


@pytest.mark.parametrize("plan, dims, knobs, message", [
    ("tensor_cores", 3, {"x_tiles": 2},
     "x_tiles = 2: a Tensor Core kernel warp computes 1 tile along x, or 2 or 4 in 1D or 2D"),
    ("tensor_cores", 2, {"inner_rows": 4}, "inner_rows = 4: a Tensor Core kernel warp computes 1 inner row, or 2 or 4 in 3D"),
    ("tensor_cores", 2, {"x_tiles": 3}, "x_tiles = 3: a Tensor Core kernel warp computes 1 tile along x"),
    ("sparse_tensor_cores", 2, {"inner_rows": 2}, "inner_rows = 2: a sparse kernel warp computes 1 inner row"),
    ("sparse_tensor_cores", 3, {"x_tiles": 4}, "x_tiles = 4: a sparse kernel warp computes 1 tile along x"),
    ("sparse_tensor_cores", 1, {"x_tiles": 2}, "x_tiles = 2: a sparse kernel warp computes 1 tile along x, or 2 or 4 in 2D"),
])
def test_lines_per_warp_beyond_what_the_kernels_take_are_refused_in_one_line(plan, dims, knobs, message):
    from tcadvisor.mma import MmaShape
    from tcadvisor.stencil import Stencil

    st = Stencil.box(dims, 1)
    with pytest.raises(TcAdvisorError) as err:
        if plan == "tensor_cores":
            plans.plan_tensor_cores(st, 1, "fp16", MmaShape.parse("m16n8k16"), **knobs)
        else:
            plans.plan_sparse_tensor_cores(st, 1, "fp16", **knobs)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)
    assert plans.lines_per_warp(dims, None, None, "any") == 1
    assert plans.lines_per_warp(2, 4, None, "any") == 4 and plans.lines_per_warp(3, 1, 2, "any") == 2


def test_sparse_stages_replace_the_slices_ahead_and_take_shared_memory():
    """``stages``: prefetch becomes 0 (giving both is refused in one line), each warp's stages add ni + ir - 1 rows of
    512 bytes per chunk to the block's shared memory, and outside 2-8 the count is refused."""
    from tcadvisor.errors import TcAdvisorError
    from tcadvisor.gpu import plans

    plain = plans.plan_sparse_tensor_cores(Stencil.box(2, 1), 7, "fp16", x_tiles=2, prefetch=1)
    staged = plans.plan_sparse_tensor_cores(Stencil.box(2, 1), 7, "fp16", x_tiles=2, stages=3)
    assert staged.options["prefetch"] == 0 and staged.options["stages"] == 3 and plain.options["stages"] == 0
    assert staged.smem - plain.smem == 4 * 3 * 2 * 32 * 16  # 4 warps, 3 stages, 2 x tiles, 16 bytes a lane
    assert ("K_BSTAGES", 3) in staged.defines and "K_BSTAGES" not in dict(plain.defines)
    box3 = plans.plan_sparse_tensor_cores(Stencil.box(3, 1), 1, "tf32", inner_rows=2, stages=2)
    assert box3.smem == 4 * 2 * (3 + 2 - 1) * 2 * 32 * 16  # TF32: two chunks; 3 inner lines + 1 extra row
    with pytest.raises(TcAdvisorError, match=r"^stages 3 and prefetch 2: .*give prefetch 0$"):
        plans.plan_sparse_tensor_cores(Stencil.box(2, 1), 7, "fp16", stages=3, prefetch=2)
    for bad in (1, 9):
        with pytest.raises(TcAdvisorError, match=rf"^stages {bad}: the sparse kernel stages 2 to 8"):
            plans.plan_sparse_tensor_cores(Stencil.box(2, 1), 7, "fp16", stages=bad)


def test_deeper_fusion_names_what_stops_each_kernel():
    """benchmarks/deeper_fusion.py sorts the kernels' own refusals (target 7 asks which limit stops fusion): the
    fused radius of the Tensor Core kernels, the 3D line mask, the 3D CUDA-core tiles' registers."""
    import importlib.util
    from pathlib import Path

    from tcadvisor.gpu import registry
    from tcadvisor.support import depth_refusal

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "deeper_fusion.py"
    spec = importlib.util.spec_from_file_location("deeper_fusion", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cases = [("tensor_core", "Box-2D3R", 3, "float", "fused radius"), ("tensor_core", "Box-1D3R", 22, "half", "fused radius"),
             ("sparse_tensor_core", "Box-2D1R", 9, "half", "fused radius"),
             ("tensor_core", "Box-3D1R", 6, "half", "kernel lines"),
             ("cuda_core", "Box-3D3R", 2, "double", "registers")]
    for unit, name, t, dtype, kind in cases:
        profile = registry.bundled_profile(unit)
        gpu = find_spec("h100-calibrated")
        precision, _ = profile.precision_for(dtype, gpu)
        why = depth_refusal(profile, parse_stencil(name), t, dtype, precision, gpu)
        assert why and mod.limit_kind(why) == kind, (unit, name, t, why)
    assert mod.limit_kind("a block needs 306 KiB of shared memory per block") == "shared memory"


def test_the_dense_kernel_occupancy_takes_the_compilers_registers_where_listed():
    """In 1D the 16-bit dense kernel's registers stray from the live-word estimate (the compiler gave 104 at r·t = 32
    in FP16 with one x tile, 255 with the four of tensor_cores_1d_x_tiles, 192 with them built for the fields'
    alignment against an estimate of 234, kernels/compiled-resources.csv); the planner's occupancy takes the listed
    count there, and the estimate where nothing is listed or for the 3D CUDA-core tiles, whose counts only choose
    tiles that do not spill."""
    from tcadvisor.gpu import plans as P
    from tcadvisor.hardware import find_spec
    from tcadvisor.validate.corpus import default_mma

    spec = find_spec("h100")
    st = Stencil.box(1, 1)
    plan = P.plan_tensor_cores(st, 32, "fp16", default_mma("tensor_core", st, 32, "fp16", spec))
    listed = P.compiled_resources()[(plan.source, P.defines_key(plan.defines))][0]
    estimate = min(plan.register_cap, plan.live_words + P.REGISTER_OVERHEAD[plan.source])
    assert plan.registers == listed and abs(listed - estimate) > 16
    # a configuration the table does not list (two warps per block): the estimate
    other = P.plan_tensor_cores(st, 32, "fp16", plan.mma, warps=2)
    assert (other.source, P.defines_key(other.defines)) not in P.compiled_resources()
    assert other.registers == min(other.register_cap, other.live_words + P.REGISTER_OVERHEAD[other.source])
    # a 3D CUDA-core tile the table lists (compiled to 174 registers) keeps the estimate
    cc = P.plan_cuda_cores(Stencil.box(3, 2), 2, "fp32")
    counted = P.compiled_resources()[(cc.source, P.defines_key(cc.defines))][0]
    assert cc.registers == min(cc.register_cap, cc.live_words + P.REGISTER_OVERHEAD[cc.source]) != counted


def test_3d_cuda_core_vector_loads_where_the_defaults_list_them():
    """cc3d_vector_loads of kernels/defaults.yaml (FP32 r = 1 at t = 3, FP16 r = 1 at t = 1 and 4, FP64 r = 1 at t = 1):
    the default plan reads its shared rows as vectors there and not at the depths beside; BF16 takes FP16's; a tile
    knob given leaves the residue layout (a scan varies one thing), vector_loads given alone keeps the measured
    tile; the model reads the plan's values per load instruction."""
    def vld(st, t, precision, **kw):
        plan = plans.plan_cuda_cores(st, t, precision, **kw)
        return dict(plan.defines).get("K_VLD") == 1 and plan.options["vector_loads"]

    box = Stencil.box(3, 1)
    assert vld(box, 3, "fp32") and not vld(box, 2, "fp32") and not vld(box, 4, "fp32")
    assert vld(box, 4, "fp16") and vld(box, 4, "bf16") and not vld(box, 3, "bf16")
    assert vld(box, 1, "fp64") and not vld(box, 2, "fp64")
    assert not vld(box, 3, "fp32", v=2)
    given = plans.plan_cuda_cores(box, 4, "fp32", vector_loads=True)
    default = plans.plan_cuda_cores(box, 4, "fp32")
    assert given.tile == default.tile and given.block == default.block and given.options["vector_loads"]
    # v = 2 columns, r = 1: a window of 4 values in two 8-byte loads; v = 4, r = 2: 8 values in two 16-byte loads
    assert plans.plan_cuda_cores(box, 3, "fp32").options["values_per_load"] == 2
    assert plans.plan_cuda_cores(Stencil.box(3, 2), 1, "fp32", v=4, cols=32, rows=16,
                                 vector_loads=True).options["values_per_load"] == 4
    assert default.options["values_per_load"] == 1
    with pytest.raises(TcAdvisorError, match="options of the 3D CUDA-core kernel"):
        plans.plan_cuda_cores(Stencil.box(2, 1), 3, "fp32", vector_loads=True)


def test_3d_radius1_stencils_of_few_points_take_their_own_measured_tiles():
    """cc3d_radius1_few_points of kernels/defaults.yaml (H200, cc3d-nonbox): a radius-1 3D stencil of at most the
    entry's points takes Star-3D1R's measured tile -- at FP32 t = 2 up to 9 points, at t = 3 up to 19 --, a stencil of
    more points the box's (cc3d_radius1), as does every depth without an entry (FP32 t = 4); the tiles were timed with
    the residue layout and keep it where the box's tile reads vectors (FP32 t = 3); BF16 takes FP16's entries; a tile
    knob given still leaves the table alone."""
    def tile(st, t, precision, **kw):
        plan = plans.plan_cuda_cores(st, t, precision, **kw)
        o = plan.options
        return (o["v"], plan.tile["x"], o["by"], o["w"], o["prefetch"], o["trap"], o["vector_loads"])

    cube = [(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)]
    star, box = Stencil.star(3, 1), Stencil.box(3, 1)
    nine = Stencil.from_offsets([o for o in cube if abs(o[0]) + abs(o[1]) + abs(o[2]) in (0, 3)], name="nine")
    nineteen = Stencil.from_offsets([o for o in cube if abs(o[0]) + abs(o[1]) + abs(o[2]) <= 2], name="nineteen")
    twenty = Stencil.from_offsets(cube[:20], name="twenty")
    assert (star.K, nine.K, nineteen.K, twenty.K, box.K) == (7, 9, 19, 20, 27)
    few_fp32_t2 = (2, 64, 32, 2, 2, True, False)
    box_fp32_t2 = (4, 68, 36, 2, 1, True, False)
    assert tile(star, 2, "fp32") == tile(nine, 2, "fp32") == few_fp32_t2
    assert tile(nineteen, 2, "fp32") == tile(box, 2, "fp32") == box_fp32_t2
    assert tile(nineteen, 3, "fp32") == tile(star, 3, "fp32") == (2, 64, 64, 4, 2, True, False)
    assert tile(twenty, 3, "fp32") == tile(box, 3, "fp32") == (2, 64, 30, 3, 1, True, True)
    assert tile(star, 4, "fp32") == tile(box, 4, "fp32")  # no entry at t = 4
    assert tile(star, 2, "fp64") == tile(nineteen, 2, "fp64") == (2, 68, 36, 2, 2, True, False)
    assert tile(star, 5, "fp64") == tile(box, 5, "fp64")  # t = 5-7 left out: a 9-point shape lost there
    assert tile(star, 5, "bf16") == tile(star, 5, "fp16") == (2, 64, 42, 2, 2, True, False)
    assert tile(Stencil.star(3, 2), 2, "fp32")[:5] != few_fp32_t2[:5]  # radius 1 only
    assert tile(star, 2, "fp32", v=4) == (4, 64, 16, 1, 1, False, False)  # a knob: plain defaults
