"""Stencils: names, custom point sets, and K / K_t / β against exact Minkowski counts."""
import itertools
import json
from fractions import Fraction

import numpy as np
import pytest

from tcadvisor.errors import TcAdvisorError
from tcadvisor.stencil import Stencil, load_stencil_file, parse_stencil


def minkowski_count(offsets, fuse):
    """Independent reference: the t-fold Minkowski sum of a point set, by brute-force set sums."""
    base = {tuple(o) for o in offsets}
    current = set(base)
    for _ in range(fuse - 1):
        current = {tuple(a + b for a, b in zip(p, q)) for p in current for q in base}
    return len(current)


@pytest.mark.parametrize("name, shape, dims, radius, points", [
    ("Box-3D1R", "box", 3, 1, 27),
    ("box3d1r", "box", 3, 1, 27),
    ("BOX-3d1r", "box", 3, 1, 27),
    ("Star-2D2R", "star", 2, 2, 9),
    ("star2d2r", "star", 2, 2, 9),
    ("Heat-1D", "box", 1, 1, 3),
    ("1D5P", "box", 1, 2, 5),
    ("Heat-2D", "star", 2, 1, 5),
    ("Box-2D9P", "box", 2, 1, 9),
    ("Star-2D13P", "star", 2, 3, 13),
    ("Box-2D49P", "box", 2, 3, 49),
    ("Heat-3D", "star", 3, 1, 7),
    ("Box-3D27P", "box", 3, 1, 27),
    ("heat_3d", "star", 3, 1, 7),
])
def test_names_parse(name, shape, dims, radius, points):
    st = parse_stencil(name)
    assert (st.shape, st.dims, st.radius, st.K) == (shape, dims, radius, points)
    assert len(st.offsets) == points


@pytest.mark.parametrize("bad", ["Box-4D1R", "Cube-2D1R", "Box-2D0R", "Box-2D10P", "Star-2D4P", "2D1R",
                                 "", "Box-2D999R", "heat", "Box-2D1", "Star-3D2P"])
def test_bad_names_are_clean_errors(bad):
    with pytest.raises(TcAdvisorError) as err:
        parse_stencil(bad)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("shape", ["box", "star"])
@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("radius", [1, 2, 3])
def test_closed_forms_match_minkowski_counts(shape, dims, radius):
    st = getattr(Stencil, shape)(dims, radius)
    depths = range(1, 4) if dims == 3 and radius > 1 else range(1, 6)
    for fuse in depths:
        exact = minkowski_count(st.offsets, fuse)
        assert st.fused_points(fuse) == exact
        assert int(st.fused_mask(fuse).sum()) == exact
        assert st.beta(fuse) == Fraction(exact, fuse * st.K)


def test_fused_star_is_not_a_star():
    st = Stencil.star(2, 1)
    fused = Stencil.from_offsets(np.argwhere(st.fused_mask(2)) - 2)
    assert fused.shape == "custom"
    assert fused.K == 13 != Stencil.star(2, 2).K


def test_box_beta_formula_from_paper():
    # eq. 10 written out by hand: (2rt+1)^d / (t (2r+1)^d)
    for d, r, t in itertools.product([1, 2, 3], [1, 2], [1, 3, 7]):
        assert Stencil.box(d, r).beta(t) == Fraction((2 * r * t + 1) ** d, t * (2 * r + 1) ** d)


def test_custom_offsets_recognised_and_counted():
    box = Stencil.from_offsets(list(itertools.product([-1, 0, 1], repeat=2)))
    assert box.shape == "box" and box.name == "Box-2D1R"
    lshape = [(0, 0), (1, 0), (0, 1), (-1, -1)]
    st = Stencil.from_offsets(lshape, name="odd")
    assert st.shape == "custom" and st.K == 4 and st.radius == 1
    for t in range(1, 6):
        assert st.fused_points(t) == minkowski_count(lshape, t)
    upwind = Stencil.from_offsets([(0,), (-1,), (-2,)])
    assert [upwind.fused_points(t) for t in (1, 2, 3)] == [3, 5, 7]


def test_custom_files(tmp_path):
    txt = tmp_path / "upwind.txt"
    txt.write_text("# upwind 2D\n0 0\n-1, 0\n0 -1\n\n-2 0  # far\n")
    st = load_stencil_file(txt)
    assert st.K == 4 and st.name == "upwind"
    y = tmp_path / "s.yaml"
    y.write_text("name: cross\noffsets: [[0,0],[1,0],[-1,0],[0,1],[0,-1]]\n")
    assert parse_stencil(str(y)).shape == "star"
    j = tmp_path / "s.json"
    j.write_text(json.dumps({"offsets": [[0, 0, 0], [1, 1, 1]]}))
    assert parse_stencil(str(j)).dims == 3


@pytest.mark.parametrize("content, problem", [
    ("0 0\n1 x\n", "line 2"),
    ("0 0\n1 0 0\n", "dimensionalities"),
    ("", "at least one"),
    ("0 0\n", "at least one neighbour"),
    ("0 0\n100 0\n", "radius"),
])
def test_bad_custom_files(tmp_path, content, problem):
    f = tmp_path / "bad.txt"
    f.write_text(content)
    with pytest.raises(TcAdvisorError, match=problem):
        load_stencil_file(f)


def test_bad_yaml_stencil(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text("offsets: [[0, 0], [1, 0]\n")
    with pytest.raises(TcAdvisorError, match="not valid YAML"):
        parse_stencil(str(f))
    f.write_text("points: []\n")
    with pytest.raises(TcAdvisorError, match="offsets"):
        parse_stencil(str(f))


def test_missing_file_is_clean_error():
    with pytest.raises(TcAdvisorError, match="does not exist"):
        parse_stencil("no/such/stencil.txt")


@pytest.mark.parametrize("fuse", [0, -1, 1025, 2.5, True])
def test_fuse_range(fuse):
    with pytest.raises(TcAdvisorError, match="fusion depth"):
        Stencil.box(2, 1).fused_points(fuse)


def test_custom_too_deep_is_refused():
    st = Stencil.from_offsets([(0, 0, 0), (1, 0, 0), (0, 2, 0), (0, 0, -3)])
    with pytest.raises(TcAdvisorError, match="too deep"):
        st.fused_points(200)
