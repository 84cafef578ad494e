"""Subcommands added by later parts of the project (figures, GPU runs) register here."""
from __future__ import annotations

COMMANDS: dict = {}


def register(sub) -> None:  # noqa: ARG001 - filled in by the figure and GPU commands
    return None
