"""The notebooks in ``notebooks/`` run top to bottom on a CPU, and are committed without outputs.

Executed with nbclient in a kernel of *this* Python (a kernel spec written to a
temporary directory), so the notebook sees the same tcadvisor as the tests.  A
cell that raises fails the test, and so do the notebooks' own asserts.
"""
import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
KERNEL = "tcadvisor-test-python"


def test_there_are_notebooks():
    names = {p.name for p in NOTEBOOKS}
    assert {"quickstart.ipynb", "paper-reproduction.ipynb", "validation.ipynb"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_without_outputs(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [] and cell.get("execution_count") is None, cell["source"][:60]


@pytest.fixture(scope="module")
def kernel_env(tmp_path_factory):
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    from ipykernel.kernelspec import write_kernel_spec

    base = tmp_path_factory.mktemp("jupyter")
    write_kernel_spec(str(base / "kernels" / KERNEL), overrides={"display_name": "tcadvisor tests",
                                                                "argv": [sys.executable, "-m", "ipykernel_launcher",
                                                                         "-f", "{connection_file}"]})
    saved = {k: os.environ.get(k) for k in ("JUPYTER_PATH", "PYTHONPATH")}
    for key, first in (("JUPYTER_PATH", base), ("PYTHONPATH", ROOT)):  # our kernel spec, this checkout's package
        os.environ[key] = os.pathsep.join([str(first)] + ([saved[key]] if saved[key] else []))
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_top_to_bottom(kernel_env, path):
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, kernel_name=KERNEL, timeout=600, allow_errors=False,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError, naming the cell, if any cell errors
    codes = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in codes)
    errors = [o for c in codes for o in c.outputs if o.output_type == "error"]
    assert errors == []
    shown = [o for c in codes for o in c.outputs if o.output_type in ("display_data", "execute_result")]
    plotly = [o for o in shown if any("plotly" in k for k in o.get("data", {}))]
    assert plotly, "the notebook displayed no Plotly figure"
