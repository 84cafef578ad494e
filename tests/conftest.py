import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True, scope="session")
def _no_user_calibrations(tmp_path_factory):
    """The tests never see the calibrated specs in the user's own cache (~/.cache/tcadvisor/specs): without
    --gpu a test gets the bundled spec of the detected GPU, as on any machine.  Tests of the cache set
    TCADVISOR_CACHE_DIR themselves."""
    mp = pytest.MonkeyPatch()
    mp.setenv("TCADVISOR_CACHE_DIR", str(tmp_path_factory.mktemp("empty-cache")))
    yield
    mp.undo()


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


FAKE_DEVICE = {"name": "fake sm_90 device (no GPU)", "cc": (9, 0), "sms": 132, "smem_optin": 232448,
               "smem_per_sm": 233472, "regs_per_sm": 65536}


@pytest.fixture
def fake_gpu(monkeypatch):
    """Construct bundled kernels on a machine without a GPU: compilation is recorded, not done.

    Returns the list of ``(file, defines)`` each constructed kernel would compile,
    so that tests can compile them with nvcc, and the host-side logic (operands,
    α, numerics, launch geometry) runs as on a real device.
    """
    import types

    import numpy as np

    from tcadvisor.gpu import backend, cuda_cores, runner, sparse_tensor_cores, tensor_cores

    compiled = []

    class FakeFunction:
        num_regs = 96

    class FakeModule:
        def get_function(self, name):
            return FakeFunction()

    def fake_module(filename, defines):
        compiled.append((filename, tuple(defines)))
        return FakeModule()

    fake_cupy = types.SimpleNamespace(asarray=np.asarray)
    for mod in (cuda_cores, tensor_cores, sparse_tensor_cores):
        monkeypatch.setattr(mod, "module", fake_module)
        monkeypatch.setattr(mod, "device_info", lambda: FAKE_DEVICE)
        monkeypatch.setattr(mod, "cupy", lambda: fake_cupy)
        monkeypatch.setattr(mod, "blocks_per_sm", lambda kernel, threads, smem: 2)
    monkeypatch.setattr(backend, "device_info", lambda: FAKE_DEVICE)
    monkeypatch.setattr(runner, "device_info", lambda: FAKE_DEVICE)
    # The CUDA code exports its shared-memory layout (k_rowbuf, k_planebuf); a compiled module would report
    # what kernels/cuda_cores_*.cu computes, which test_plans checks against the planner with nvcc.
    monkeypatch.setattr(cuda_cores.CudaCoreKernel, "_const_int",
                        lambda self, name: self.plan.options[name.removeprefix("k_")])
    monkeypatch.setattr(cuda_cores.CudaCoreKernel, "set_weights", lambda self, w: None)
    return compiled
