"""The side-by-side script's reading of the public codes' output (benchmarks/public_codes_side_by_side.py).

The lines below are written by hand from the codes' print statements (EBISU's printHelper: tab-separated fields,
ms and GCells/s last; ConvStencil's and LoRAStencil's ``GStencil/s = X``), so that a wrong field index or a
failed run read as a figure fails here rather than in a results file.
"""
import importlib.util
from pathlib import Path

import pytest

# Loaded from its file: the name ``benchmarks`` may belong to an installed package (the wheel ships tcadvisor only).
_PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "public_codes_side_by_side.py"
_SPEC = importlib.util.spec_from_file_location("public_codes_side_by_side", _PATH)
_MOD = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_MOD)
parse_ebisu, parse_gstencil, public_best, summary = _MOD.parse_ebisu, _MOD.parse_gstencil, _MOD.public_best, _MOD.summary

EBISU_2D = "900\t2\t10736\t10242\t1008\t6\t256\t244\t<44,3,1>\t1.000/1\t129.008/227.000\t64/34\t168.0\t659.4\t\n"
EBISU_3D = "900\t1\t768\t352\t496\t120\t6\t256\t8\t<12,11,1>\t1.000/1\t157.8/227.0\t18/18\t45.6\t358.8\t\n"


def test_ebisu_2d_line():
    got = parse_ebisu("some banner\n" + EBISU_2D)
    assert got == {"gstencils": 659.4, "ms": 168.0, "depth": 6, "grid_blocks": "<44,3,1>",
                   "blocks_per_sm": "1.000/1"}


def test_ebisu_3d_line_has_one_more_size():
    got = parse_ebisu(EBISU_3D)
    assert (got["gstencils"], got["depth"], got["grid_blocks"]) == (358.8, 6, "<12,11,1>")


def test_ebisu_cuda_failure_is_not_a_figure():
    # EBISU prints its result line and then the failure of a cooperative launch that did not run, exit status 0
    with pytest.raises(RuntimeError, match="CUDA failure"):
        parse_ebisu(EBISU_3D + "Cuda failure j3d.cu:190: 'too many blocks in cooperative launch'\n")


def test_ebisu_without_result_line():
    with pytest.raises(RuntimeError, match="no EBISU result line"):
        parse_ebisu("[FORMA] Domain: 2048 x 2048\n")


def test_gstencil_last_line_and_implausible_values():
    assert parse_gstencil("ConvStencil(3D): \nTime = 7[ms]\n0.7\nGStencil/s = 52.3\n") == 52.3
    with pytest.raises(RuntimeError, match="no 'GStencil/s"):
        parse_gstencil("CUDA Error: an illegal memory access was encountered\n")
    with pytest.raises(RuntimeError, match="implausible"):  # an unchecked launch that failed: time near zero
        parse_gstencil("GStencil/s = 1234567.0\n")
    with pytest.raises(RuntimeError, match="implausible"):
        parse_gstencil("GStencil/s = 0.000000\n")


def _pub(size, values, code="EBISU", stencil="Star-2D1R", dtype="double"):
    return [{"code": code, "stencil": stencil, "dtype": dtype, "unit": "cuda_core", "size": size, "gstencils": v}
            for v in values]


def test_public_best_takes_the_best_median_over_sizes_and_skips_failures():
    rows = _pub("10240x10242", [495.0, 496.0, 900.0]) + _pub("10208x10242", [901.0, 899.0, ""])
    assert public_best(rows, "EBISU", "Star-2D1R", "double") == (900.0, "10208x10242")
    assert public_best(rows, "EBISU", "Star-2D1R", "float") is None


def test_summary_ratio_uses_the_best_correct_depth():
    public = _pub("10208x10242", [900.0])
    kernels = [{"stencil": "Star-2D1R", "unit": "cuda_core", "dtype": "double", "fuse": 11, "gstencils": 1170.0,
                "correct": True},
               {"stencil": "Star-2D1R", "unit": "cuda_core", "dtype": "double", "fuse": 12, "gstencils": 5000.0,
                "correct": False}]
    text = summary(public, kernels, [], "GPU", "2026-11-28")
    row = next(ln for ln in text.splitlines() if ln.startswith("| Star-2D1R"))
    assert "| 900 | 10208x10242 | 1170 | 11 | 1.30 | True |" in row
    assert "Bundled runs: 2, 1 correct." in text


def test_several_builds_of_a_code_are_named_by_their_folder():
    label = _MOD.build_label
    assert label("ConvStencil", "/tmp/pub/convstencil-own/build", True) == "ConvStencil (convstencil-own)"
    assert label("ConvStencil", "/tmp/pub/convstencil/build/", True) == "ConvStencil (convstencil)"
    assert label("ConvStencil", "/tmp/pub/convstencil/build", False) == "ConvStencil"
