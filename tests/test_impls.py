"""Implementation profiles: every published implementation is described, α sources are explicit."""
from fractions import Fraction

import pytest

from tcadvisor.errors import TcAdvisorError
from tcadvisor.impls import catalog, find_impl, load_profile_file

EXPECTED = {
    "EBISU": "cuda_core", "DRStencil": "cuda_core",
    "ConvStencil": "tensor_core", "LoRAStencil": "tensor_core", "TCStencil": "tensor_core",
    "SPIDER": "sparse_tensor_core", "SparStencil": "sparse_tensor_core",
    "tcadvisor-cc": "cuda_core", "tcadvisor-tc": "tensor_core", "tcadvisor-sptc": "sparse_tensor_core",
    "Temporal-blocking": "cuda_core",
}


def test_all_profiles_present():
    assert {p.name: p.unit for p in catalog().values()} == EXPECTED


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_profile_fields(name):
    p = find_impl(name)
    assert p.reference and p.precisions and p.summary
    if p.unit == "cuda_core":
        assert p.fusion == "temporal" and p.alpha is None
    else:
        assert p.fusion == "kernel"
        assert p.alpha.paper is not None or p.alpha.construction is not None
        for precisions in p.precisions.values():
            for precision in precisions:
                assert precision in p.mma, f"{name} names no MMA shape for {precision}"


def test_paper_constants():
    assert find_impl("ConvStencil").alpha.paper == Fraction(1, 2)
    assert find_impl("spider").alpha.paper == Fraction(15, 32)
    assert find_impl("ConvStencil").alpha.construction == "convstencil"
    assert find_impl("SPIDER").alpha.construction == "spider"


def test_bundled_tc_profile_picks_the_gpus_instruction():
    from tcadvisor.alpha_policy import instruction
    from tcadvisor.hardware import find_spec
    from tcadvisor.stencil import Stencil

    p = find_impl("tcadvisor-tc")
    h100, a100 = find_spec("h100"), find_spec("a100")
    box = Stencil.box(2, 1)
    # n = 3: the strip of 10 columns pads to 12 with k = 4 but to 16 with k = 8 or 16
    assert str(instruction(p, box, 1, "fp64", h100)[0]) == "m16n8k4"
    # n = 7: 14 columns pad to 16 with every k; the first listed wins
    assert str(instruction(p, box, 3, "fp64", h100)[0]) == "m16n8k16"
    assert str(instruction(p, box, 3, "fp64", a100)[0]) == "m8n8k4"  # Ampere lists no FP64 m16n8k*


def test_unknown_impl():
    with pytest.raises(TcAdvisorError, match="unknown implementation 'ConvStensil'.*ConvStencil"):
        find_impl("ConvStensil")


@pytest.mark.parametrize("text, field", [
    ("name: X\nunit: gpu_core\nfusion: kernel\nprecisions: {double: [fp64]}\nreference: r\n", "unit"),
    ("name: X\nunit: tensor_core\nfusion: spatial\nprecisions: {double: [fp64]}\nreference: r\n", "fusion"),
    ("name: X\nunit: tensor_core\nfusion: kernel\nprecisions: {double: [fp64]}\nreference: r\n", "alpha"),
    ("name: X\nunit: tensor_core\nfusion: kernel\nprecisions: {double: [fp64]}\nreference: r\nalpha: {paper: 1.5}\n",
     "alpha.paper"),
    ("name: X\nunit: tensor_core\nfusion: kernel\nprecisions: {double: [fp64]}\nreference: r\n"
     "alpha: {construction: magic}\n", "alpha.construction"),
    ("name: X\nunit: cuda_core\nfusion: temporal\nprecisions: {quad: [fp128]}\nreference: r\n", "precisions.quad"),
])
def test_malformed_profiles(tmp_path, text, field):
    f = tmp_path / "x.yaml"
    f.write_text(text)
    with pytest.raises(TcAdvisorError, match=f"field '{field}'"):
        load_profile_file(f)
