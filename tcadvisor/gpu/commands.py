"""CLI subcommands that run bundled kernels on a GPU (``run``)."""
from __future__ import annotations


def register(sub, commands: dict) -> None:
    return None
