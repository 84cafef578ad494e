import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def run_cli():
    """Run ``python -m tcadvisor ARGS`` as a fresh process; returns the CompletedProcess."""

    def run(*args, env=None):
        full_env = dict(os.environ)
        full_env.pop("TCADVISOR_HWSPEC_PATH", None)
        full_env.update(env or {})
        return subprocess.run(
            [sys.executable, "-m", "tcadvisor", *args],
            capture_output=True, text=True, timeout=120, env=full_env,
        )

    return run


def pytest_collection_modifyitems(config, items):
    """Skip ``gpu`` tests cleanly when there is no GPU or no CuPy."""
    try:
        import cupy  # noqa: F401

        has_gpu = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - any failure means no usable GPU
        has_gpu = False
    if has_gpu:
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU with CuPy")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
