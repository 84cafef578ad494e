"""The import graph of tcadvisor/: circles, and imports that run from a lower layer back up to a higher one.

    python benchmarks/import_graph.py [--json] [--edges]

Reads every module of the package with :mod:`ast` (nothing is imported), and records each import of another
tcadvisor module with where it runs: at module level (when the importing module is loaded; class bodies and
``try`` blocks included) or inside a function (when that function is called; what a lazy import defers).
Imports under ``if TYPE_CHECKING:`` are left out (they never run).

Counted:

* **circles**: strongly connected components of more than one module, in the graph of module-level imports
  (a circle Python resolves only by load order) and in the graph of all imports (a circle hidden by moving an
  import into a function is still a circle);
* **upward imports**: imports from a module of a lower layer (:data:`LAYERS`) of a module of a higher one,
  module-level and function-level counted apart.  The layers are the package's intended picture
  (docs/architecture.md): core data types and readers at the bottom, then the launch plans the model and the
  kernels share, the model, the transformations, the advisor, what reports it, the GPU kernels, validation,
  and the command line / API edge at the top.
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "tcadvisor"

#: Layer of each module, lowest first: a module may import from its own layer and below.  Matched by the longest
#: prefix of the dotted name below ``tcadvisor`` (``gpu.plans`` before ``gpu``).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    # the model (SymPy, imports nothing of the package) and the data types and readers everything shares
    ("core", ("errors", "bounded", "data", "files", "dtypes", "mma", "minkowski", "model", "stencil", "reference",
              "hardware_spec", "hardware_schema", "hardware", "impls", "progress", "fingerprint", "search")),
    # the MMA constructions: a fused stencil onto Tensor Core instructions
    ("transforms", ("transforms",)),
    # the bundled kernels as the CPU sees them: launch plans, measured defaults, operands, the registry
    ("plans", ("gpu.plans", "gpu.defaults", "gpu.sparse_operands", "gpu.layouts", "gpu.dense16", "gpu.registry")),
    # the refined model and what an option needs: its terms from the plans, alpha, accuracy, kernel support
    ("refined", ("refinement", "alpha_policy", "accuracy", "support")),
    ("advisor", ("advisor", "wording", "sweeps")),
    ("report", ("report", "explanation", "plots", "paper")),
    # the kernels on a GPU (CuPy), and validation on top of them
    ("gpu", ("gpu",)),
    ("validate", ("validate",)),
    # the edges: command line, Python API, stencil sources (what parses a user's input)
    ("edge", ("__init__", "__main__", "cli", "arguments", "queryargs", "sources", "transforms.commands",
              "gpu.commands", "validate.commands", "plots.commands")),
]


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def layer_of(module: str) -> tuple[int, str]:
    best = None
    for rank, (name, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), rank, name)
    if best is None:
        raise SystemExit(f"tcadvisor.{module} has no layer in LAYERS: add it")
    return best[1], best[2]


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(path: Path, modules: set[str]) -> list[tuple[str, bool, int]]:
    """(imported module, at module level, line) for every import of a tcadvisor module in ``path``."""
    me = module_name(path)
    package = me.split(".") if path.name == "__init__.py" else me.split(".")[:-1]
    if me == "__init__":
        package = []
    out = []

    def resolve(base: list[str], names: list[str]) -> list[str]:
        found = []
        for name in names:
            full = ".".join(base + [name]) if name else ".".join(base)
            if full in modules:
                found.append(full)
            elif ".".join(base) in modules:
                found.append(".".join(base))
        return found

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for sub in child.orelse:
                    visit_one(sub, top)
                continue
            visit_one(child, top)

    def visit_one(child: ast.AST, top: bool) -> None:
        if isinstance(child, ast.Import):
            for alias in child.names:
                if alias.name == "tcadvisor" or alias.name.startswith("tcadvisor."):
                    parts = alias.name.split(".")[1:]
                    while parts and ".".join(parts) not in modules:
                        parts = parts[:-1]
                    out.append((".".join(parts) or "__init__", top, child.lineno))
        elif isinstance(child, ast.ImportFrom):
            if child.level:
                base = package[: len(package) - (child.level - 1)] if child.level > 1 else list(package)
                mod = child.module.split(".") if child.module else []
                base = base + mod
            elif child.module and (child.module == "tcadvisor" or child.module.startswith("tcadvisor.")):
                base = child.module.split(".")[1:]
            else:
                return
            targets = resolve(base, [a.name for a in child.names]) or ([".".join(base)] if base else ["__init__"])
            for target in dict.fromkeys(targets):
                out.append((target or "__init__", top, child.lineno))
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            visit(child, False)
        else:
            visit(child, top)

    visit(ast.parse(path.read_text(encoding="utf-8")), True)
    return [(t, top, line) for t, top, line in out if t != me and t in modules]


def graph() -> dict[str, list[tuple[str, bool, int]]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {module_name(p): imports_of(p, modules) for p in paths}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                    advanced = True
                    break
                if nxt in on:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def measure() -> dict:
    g = graph()
    module_level = {m: {t for t, top, _ in imps if top} for m, imps in g.items()}
    every = {m: {t for t, _, _ in imps} for m, imps in g.items()}
    upward = defaultdict(list)
    for m, imps in g.items():
        rank, name = layer_of(m)
        for t, top, line in imps:
            trank, tname = layer_of(t)
            if trank > rank:
                upward["module" if top else "function"].append(f"{m} ({name}) -> {t} ({tname}), line {line}")
    seen_up = {(e.split(" ")[0], e.split(" -> ")[1].split(" ")[0]) for k in upward for e in upward[k]}
    return {
        "modules": len(g),
        "imports": sum(len(set((t, top) for t, top, _ in imps)) for imps in g.values()),
        "circles_module_level": circles(module_level),
        "circles_all_imports": circles(every),
        "upward_module_level": sorted(upward["module"]),
        "upward_function_level": sorted(upward["function"]),
        "upward_pairs": len(seen_up),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="everything as JSON")
    ap.add_argument("--edges", action="store_true", help="list every upward import")
    args = ap.parse_args(argv)
    res = measure()
    if args.json:
        print(json.dumps(res, indent=1))
        return 0
    print(f"{res['modules']} modules, {res['imports']} imports of tcadvisor modules")
    for key, what in (("circles_module_level", "module-level imports"), ("circles_all_imports", "all imports")):
        comps = res[key]
        print(f"circles in the graph of {what}: {len(comps)}"
              + "".join(f"\n  {len(c)} modules: {', '.join(c)}" for c in comps))
    print(f"upward imports: {len(res['upward_module_level'])} at module level, "
          f"{len(res['upward_function_level'])} inside functions ({res['upward_pairs']} module pairs)")
    if args.edges:
        for e in res["upward_module_level"]:
            print("  module  ", e)
        for e in res["upward_function_level"]:
            print("  function", e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
