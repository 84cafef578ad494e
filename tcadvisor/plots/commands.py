"""CLI subcommands for figures (``map``, ``roofline``, ``figures``)."""
from __future__ import annotations


def register(sub, commands: dict) -> None:
    return None
