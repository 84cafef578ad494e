"""Where the packaged data directories live.

The YAML data (``hwspecs/``, ``models/``) and the CUDA sources (``kernels/``)
sit at the top of the repository so that a reader finds them by name.  The wheel
carries them inside the package as ``tcadvisor/_data/<name>`` (see
``pyproject.toml``).  In a source checkout or an editable install they are found
beside the package instead.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def data_dir(name: str) -> Path:
    """Return the directory holding the packaged data set ``name``."""
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"tcadvisor data directory {name!r} is missing from this installation "
        f"(looked in {_PACKAGE / '_data'} and {_PACKAGE.parent})"
    )
