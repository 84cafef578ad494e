"""The package's import graph (benchmarks/import_graph.py): no circle at module level, the query edge outside the
advisor's circle, and the layers defined for every module."""
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _graph():
    spec = importlib.util.spec_from_file_location("import_graph", os.path.join(ROOT, "benchmarks", "import_graph.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_circle_at_module_level_and_every_module_has_a_layer():
    res = _graph().measure()  # exits naming a module that has no layer
    assert res["modules"] > 90 and res["circles_module_level"] == []


def test_the_query_edge_and_the_search_defaults_are_outside_every_circle():
    res = _graph().measure()
    in_circles = {m for comp in res["circles_all_imports"] for m in comp}
    assert not in_circles & {"queryargs", "search", "cli"}, res["circles_all_imports"]
    assert not any(e.startswith(("advisor ", "sweeps ")) and "-> queryargs" in e for e in res["upward_module_level"])


def test_function_level_imports_are_seen():
    g = _graph().graph()
    assert ("sweeps", False) in {(t, top) for t, top, _ in g["advisor"]}  # advisor.sweep delegates lazily
    assert all(t != "advisor" for t, _, _ in g["wording"])  # wording names Advice for type checkers only
