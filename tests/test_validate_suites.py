"""Suite files: the bundled suites parse, and every mistake is one line naming file, case and field."""
import textwrap

import pytest

from tcadvisor.errors import TcAdvisorError
from tcadvisor.hardware import UNITS
from tcadvisor.validate.suites import MIN_REPEATS, bundled_suites, load_suite


def test_bundled_suites_parse_and_expand():
    assert {"paper", "quick", "depth-sweep"} <= set(bundled_suites())
    paper = load_suite("paper")
    # the paper's six Table 3 cases, each on every unit
    t3 = [(c.stencil.name, c.dtype, c.fuses) for c in paper.cases if c.id.startswith("case") and c.id[4:].isdigit()]
    assert t3 == [("Box-2D1R", "double", (3,)), ("Box-2D3R", "double", (1,)), ("Box-2D1R", "float", (7,)),
                  ("Box-2D7R", "float", (1,)), ("Box-3D1R", "double", (3,)), ("Box-3D1R", "float", (7,))]
    assert all(c.units == UNITS and c.repeats >= MIN_REPEATS and c.grid == "auto" for c in paper.cases)
    configs = paper.configs()
    assert len(configs) == len(paper.cases) * len(UNITS)
    assert all(c.mma is None for c in configs)
    sweep = load_suite("depth-sweep")
    box = next(c for c in sweep.cases if c.id == "box2d1r-double")
    assert box.fuses == tuple(range(1, 17))
    assert [c.fuse for c in sweep.configs() if c.case == "box2d1r-double" and c.unit == "cuda_core"] == list(range(1, 17))


def test_user_suite_with_defaults_ranges_and_lists(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text(textwrap.dedent("""
        name: mine
        defaults: {dtype: float, repeats: 7, sweeps: 2, units: [tensor_core, cuda_core]}
        tie_band: 0.05
        cases:
          - {stencil: Star-2D2R, fuse: [4, 1, 2, 2]}
          - {id: deep, stencil: heat-3d, dtype: fp64, fuse: "2..3", grid: 256x128x64, mma: M16N8K8, units: tensor_core}
    """))
    s = load_suite(str(path))
    assert s.name == "mine" and s.tie_band == 0.05
    a, b = s.cases
    assert a.id == "Star-2D2R-float-t1-2-4" and a.fuses == (1, 2, 4) and a.units == ("cuda_core", "tensor_core")
    assert (a.repeats, a.sweeps, a.dtype) == (7, 2, "float")
    assert b.stencil.name == "Star-3D1R" and b.dtype == "double" and b.fuses == (2, 3) and b.grid == "256x128x64"
    cfgs = s.configs()
    assert [(c.case, c.fuse, c.unit, c.mma) for c in cfgs[-2:]] == [("deep", 2, "tensor_core", "m16n8k8"),
                                                                    ("deep", 3, "tensor_core", "m16n8k8")]
    assert all(c.mma is None for c in cfgs if c.unit == "cuda_core")


BAD = [
    ("cases: []", "field 'cases'"),
    ("cases:\n  - {fuse: 1}", "case 1: field 'stencil': missing"),
    ("cases:\n  - {stencil: Box-2D1R}", "case 1: field 'fuse': missing"),
    ("cases:\n  - {id: x, stencil: Blob-2D1R, fuse: 1}", "case 1 (x): field 'stencil'"),
    ("cases:\n  - {stencil: Box-2D1R, fuse: 1}\n  - {id: two, stencil: Box-2D1R, fuse: 0}", "case 2 (two): field 'fuse'"),
    ("cases:\n  - {stencil: Box-2D1R, fuse: 3-1}", "field 'fuse': range '3-1'"),
    ("cases:\n  - {stencil: Box-2D1R, fuse: 1, dtype: quad}", "field 'dtype': unknown dtype 'quad'"),
    ("cases:\n  - {stencil: Box-2D1R, fuse: 1, units: [gpu]}", "field 'units'"),
    ("cases:\n  - {stencil: Box-2D1R, fuse: 1, grid: 100x100x100}", "field 'grid': 100x100x100 has 3 extents"),
    ("cases:\n  - {stencil: Box-2D1R, fuse: 1, repeats: 3}", f"field 'repeats': expected an integer from {MIN_REPEATS}"),
    ("cases:\n  - {stencil: Box-2D1R, fuse: 1, mma: m16n8}", "field 'mma'"),
    ("cases:\n  - {stencil: Box-2D1R, fuse: 1, colour: red}", "case 1: field 'colour': unknown"),
    ("defaults: {stencil: Box-2D1R}\ncases:\n  - {stencil: Box-2D1R, fuse: 1}", "defaults: field 'stencil'"),
    ("tie_band: 2\ncases:\n  - {stencil: Box-2D1R, fuse: 1}", "field 'tie_band'"),
    ("cases:\n  - {id: a, stencil: Box-2D1R, fuse: 1}\n  - {id: a, stencil: Box-2D2R, fuse: 1}", "repeats the id of case 1"),
    ("suite: x\ncases: []", "field 'suite': unknown"),
    ("cases: [\n", "not valid YAML"),
]


@pytest.mark.parametrize("text, needle", BAD)
def test_bad_suite_files_give_one_line_naming_file_case_and_field(tmp_path, text, needle):
    path = tmp_path / "bad.yaml"
    path.write_text(text + "\n")
    with pytest.raises(TcAdvisorError) as info:
        load_suite(str(path))
    msg = str(info.value)
    assert "\n" not in msg and str(path) in msg and needle in msg, msg


def test_unknown_suite_names_the_bundled_ones():
    with pytest.raises(TcAdvisorError, match="unknown suite 'papr'.*paper"):
        load_suite("papr")
    with pytest.raises(TcAdvisorError, match="does not exist"):
        load_suite("no/such/suite.yaml")
