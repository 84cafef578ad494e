"""The one exception type a user is meant to see.

Anything raised as :class:`TcAdvisorError` is a problem with the user's input or
data files (a stencil name, a GPU spec, an option value).  The CLI prints its
message as a single line and exits with status 2; it never shows a traceback for
it.  Programming errors stay ordinary exceptions so that they *do* show one.
"""
from __future__ import annotations


class TcAdvisorError(ValueError):
    """A user-facing error: one sentence naming the bad value and what is accepted."""


class UnavailableError(TcAdvisorError):
    """A requested combination does not exist on this hardware (e.g. sparse FP64)."""


class AlphaModeError(UnavailableError):
    """The α asked for does not exist for an implementation (``--alpha paper`` for one without a published
    constant, ``--alpha constructed`` for one without a construction).  An implementation the user named
    makes it an error; one the advisor chose by default is shown as not available, with this reason."""


class WorkBudgetExceeded(TcAdvisorError):
    """A query would take more time or memory than tcadvisor allows for one answer.

    Raised *before* the work starts, from an estimate, so that every query
    answers or refuses quickly.  The message names the stencil, the fusion depth,
    the estimated work and the deepest depth that fits the budget; ``deepest``
    carries that depth (0 if none) for callers that search over depths.  The
    advisor's best-depth search skips such depths and says so; a depth the user
    asked for explicitly is refused with this message (exit status 2).
    """

    def __init__(self, message: str, deepest: int = 0):
        super().__init__(message)
        self.deepest = deepest
