"""Which α a Tensor Core option uses, where it came from, and which instruction it assumes.

α is the useful fraction of the multiply-accumulates a Tensor Core executes.  It
depends on the transformation, the *fused* stencil and the MMA instruction shape,
so a published constant is only right for the configuration it was derived for
(SPIDER's 15/32 is (2R+1)/32 at R = 7; ConvStencil's 1/2 ignores the padding of
the operands to the instruction's k).  Applying such a constant to another stencil
or depth changes verdicts, so the policy is:

* ``default`` (what every command uses unless told otherwise): α *constructed* by
  counting the operands the transformation builds for this fused stencil,
  instruction shape and precision, wherever the implementation has a construction;
  the published constant only where none exists, and then the answer says so.
* ``paper``: the published constant (``tcadvisor reproduce-paper`` uses it, since
  the paper's tables were computed with it).
* ``constructed``: the construction, an error where none exists.
* a number in [``MIN_ALPHA``, 1]: given by the user.

Every resolved α carries its ``source`` — exactly one of ``constructed``,
``paper`` or ``user`` — which the text, the JSON, maps and ``explain`` show.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from .errors import AlphaModeError, TcAdvisorError, UnavailableError, WorkBudgetExceeded
from .hardware import GpuSpec
from .impls import ImplProfile
from .mma import MmaShape
from .stencil import Stencil

#: Where an α came from.
ALPHA_SOURCES = ("constructed", "paper", "user")
#: Smallest α a user may give.  Constructions never come near it (a radius-64 3D star
#: on a padded plane decomposition is about 2e-4); below it the executed work per
#: point overflows the model's meaning (and, near 1e-300, floating point itself).
MIN_ALPHA = Fraction(1, 10**6)
_MODES = ("default", "paper", "constructed", "value")


@dataclass(frozen=True)
class AlphaChoice:
    """How α is chosen for Tensor Core options (see the module docstring)."""

    mode: str = "default"
    value: Fraction | None = None
    #: With ``value``: the instruction that α was counted for (a bundled kernel's own operands), used
    #: as the option's instruction whether or not the GPU's spec lists it.
    instruction: MmaShape | None = None

    def __post_init__(self):
        if self.mode not in _MODES:
            raise TcAdvisorError(f"α mode {self.mode!r} is not one of {', '.join(_MODES)}")
        if self.mode == "value":
            object.__setattr__(self, "value", check_alpha_value(self.value))
        elif self.instruction is not None:
            raise TcAdvisorError("an instruction comes with a given α only (the operands it was counted from)")

    @classmethod
    def parse(cls, text: "str | float | Fraction | AlphaChoice | None") -> "AlphaChoice":
        """``--alpha``: ``default``/``auto``, ``paper``, ``constructed`` or a number in [1e-6, 1]."""
        if text is None:
            return cls()
        if isinstance(text, AlphaChoice):
            return text
        if isinstance(text, (int, float, Fraction)) and not isinstance(text, bool):
            return cls("value", text)
        if not isinstance(text, str) and not hasattr(text, "__float__"):  # a list, a dict, None-like objects
            shown = " ".join(repr(text).split())
            raise TcAdvisorError(f"--alpha {shown if len(shown) <= 60 else shown[:57] + '...'} "
                                 f"({type(text).__name__}) is not understood; expected 'default', 'paper', "
                                 "'constructed' or a number in [1e-6, 1] such as 0.42 or 15/32")
        key = str(text).strip().lower()
        if key in ("default", "auto", ""):
            return cls()
        if key == "paper":
            return cls("paper")
        if key in ("constructed", "construction", "construct"):
            return cls("constructed")
        return cls("value", str(text).strip())


def check_alpha_value(value) -> Fraction:
    """A user's α as an exact fraction in [MIN_ALPHA, 1], or a one-line error."""
    if isinstance(value, bool):
        value = str(value)
    try:
        frac = value if isinstance(value, Fraction) else Fraction(str(value).strip())
    except (ValueError, ZeroDivisionError, TypeError):
        raise TcAdvisorError(
            f"--alpha {value} is not understood; expected 'default', 'paper', 'constructed' "
            "or a number in [1e-6, 1] such as 0.42 or 15/32"
        ) from None
    if not 0 < frac <= 1:
        raise TcAdvisorError(f"--alpha {value} is outside (0, 1]; α is the useful fraction of executed MACs")
    if frac < MIN_ALPHA:
        raise TcAdvisorError(
            f"--alpha {value} is below 1e-6; α is the useful fraction of executed MACs and no transformation "
            "wastes a million MACs per useful one (expected a number in [1e-6, 1])"
        )
    return frac


@dataclass(frozen=True)
class ResolvedAlpha:
    """α of one Tensor Core option."""

    alpha: Fraction
    source: str  # one of ALPHA_SOURCES
    mma: MmaShape | None  # the instruction the implementation executes (None: unknown)
    note: str  # how it was obtained, one clause


# --------------------------------------------------------------------------- instruction


def instruction(impl: ImplProfile, stencil: Stencil, fuse: int, precision: str,
                gpu: GpuSpec) -> tuple[MmaShape | None, str]:
    """The MMA shape ``impl`` executes for this fused stencil on ``gpu``, and a note.

    A transformation is never assigned a shape the GPU's spec does not list: the
    profile's shapes that the GPU lists (preferred first); if it lists none of them
    but the implementation has a construction, the construction is applied to the
    GPU's own shapes; otherwise the option is unavailable (:class:`UnavailableError`).
    With several candidates, an implementation with a construction executes the one
    that pads this fused kernel least (the bundled Tensor Core kernel chooses the
    same way).  A spec that lists no shapes at all leaves the profile's choice
    unchecked, which the note says.
    """
    listed = impl.mma.get(precision, ())
    available = gpu.shapes(impl.unit, precision)
    construction = impl.alpha.construction if impl.alpha is not None else None
    note = ""
    if not available:
        candidates = listed
        if listed:
            note = f"{gpu.name}'s spec lists no {precision.upper()} shapes; assumed {impl.name}'s {listed[0]}"
    else:
        candidates = tuple(s for s in listed if s in available) if listed else available
        if not candidates:
            wanted = ", ".join(map(str, listed))
            have = ", ".join(map(str, available))
            if construction is None:
                raise UnavailableError(
                    f"{impl.name} executes {wanted}, which {gpu.name} does not list for {precision.upper()} "
                    f"(it lists {have}), and its α is known only for that instruction"
                )
            candidates = available
            note = f"{impl.name}'s {wanted} is not listed for {gpu.name}; its transformation is applied to {have}"
    if not candidates:
        return None, note
    if len(candidates) > 1 and construction is not None:
        from . import transforms

        return transforms.least_padding_shape(construction, stencil, candidates, fuse=fuse, precision=precision), note
    return candidates[0], note


# --------------------------------------------------------------------------- α


def constructed_alpha(transform: str, stencil: Stencil, fuse: int, shape: MmaShape, precision: str,
                      options: tuple = ()) -> Fraction:
    """α counted from the operands ``transform`` builds for the t-step fused stencil on ``shape``.

    :func:`tcadvisor.transforms.alpha_for` (cached; closed forms for box and star
    stencils at any radius and depth, which the tests prove equal to the built
    matrices; custom stencils within a work budget, else
    :class:`~tcadvisor.errors.WorkBudgetExceeded`).  A configuration the
    transformation cannot build (SPIDER in FP64, a fused radius beyond what the
    instruction holds) is :class:`~tcadvisor.errors.UnavailableError`.
    """
    from . import transforms

    try:
        return transforms.alpha_for(transform, stencil, fuse, shape, precision, **dict(options)).alpha
    except (WorkBudgetExceeded, UnavailableError):
        raise
    except TcAdvisorError as exc:
        raise UnavailableError(str(exc)) from None


def resolve_alpha(impl: ImplProfile, choice: AlphaChoice, stencil: Stencil, fuse: int,
                  precision: str, gpu: GpuSpec) -> ResolvedAlpha:
    """α for a Tensor Core option under ``choice`` (see the module docstring)."""
    src = impl.alpha
    if choice.mode == "value" and choice.instruction is not None:
        return ResolvedAlpha(choice.value, "user", choice.instruction,
                             f"counted from the operands the kernel uploaded for {choice.instruction}")
    shape, shape_note = instruction(impl, stencil, fuse, precision, gpu)
    mode = choice.mode
    if mode == "value":
        return ResolvedAlpha(choice.value, "user", shape, "given by --alpha")
    if mode == "default":
        mode = "constructed" if src.construction is not None else "paper"
    if mode == "paper":
        if src.paper is None:
            raise AlphaModeError(f"{impl.name} has no published α; use --alpha constructed or a number")
        note = (f"{impl.name}'s published constant" + (f" ({src.paper_note})" if src.paper_note else "")
                + ("; no construction for this implementation" if src.construction is None else ""))
        return ResolvedAlpha(src.paper, "paper", shape, note)
    if src.construction is None:
        raise AlphaModeError(
            f"{impl.name} has no α construction; use --alpha paper or a number (see 'tcadvisor impls')"
        )
    if shape is None:
        raise UnavailableError(
            f"{impl.name} names no MMA shape for {precision.upper()} and {gpu.name} lists none, "
            "so its α cannot be constructed"
        )
    alpha = constructed_alpha(src.construction, stencil, fuse, shape, precision, src.construction_options)
    note = f"constructed from {impl.name}'s operands for the {fuse}-step fused kernel on {shape}"
    if shape_note:
        note += f" ({shape_note})"
    return ResolvedAlpha(alpha, "constructed", shape, note)
