"""The layout's rules, checked on the source: dependencies point one way (scanner -> sandbox), the rules and the
report views never reach Docker, no import cycle (lazy and TYPE_CHECKING imports count too), every package folder
ships in the wheel, and no module grows past the size the house allows."""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("scanner", "sandbox")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
# Third-party modules that talk to a Docker engine, or to the network on the engine's behalf.
ENGINE_MODULES = ("docker", "requests")
PURE_PREFIXES = ("scanner.rules", "scanner.report")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _source_modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[_module_name(path)] = path
    return found


MODULES = _source_modules()


def _imported(path: Path, module: str) -> Iterator[str]:
    """Every module name an import statement anywhere in the file names (top level, in functions, under
    TYPE_CHECKING), with `from package import submodule` resolved to the submodule."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            yield base
            for alias in node.names:
                if f"{base}.{alias.name}" in MODULES:
                    yield f"{base}.{alias.name}"


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        graph[module] = {name for name in _imported(path, module) if name != module}
    return graph


GRAPH = _graph()


def _internal(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Edges between this project's own modules; importing `a.b.c` also runs `a` and `a.b` (their __init__)."""
    edges: dict[str, set[str]] = {}
    for module, names in graph.items():
        targets = set()
        for name in names:
            parts = name.split(".")
            for i in range(1, len(parts) + 1):
                prefix = ".".join(parts[:i])
                if prefix in MODULES and prefix != module and not module.startswith(prefix + "."):
                    targets.add(prefix)
        edges[module] = targets
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _reaches(start: str, edges: dict[str, set[str]], raw: dict[str, set[str]]) -> set[str]:
    """Every module (own or third-party) `start` imports, directly or through the project's own modules."""
    seen: set[str] = set()
    todo = [start]
    reached: set[str] = set()
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        reached.update(raw.get(module, ()))
        todo.extend(edges.get(module, ()))
    return reached | seen


def test_the_graph_is_read() -> None:
    """A near miss for the checks below: the walker sees real edges (so an empty graph cannot pass them)."""
    edges = _internal(GRAPH)
    assert "sandbox.core.session" in edges["sandbox.run.server"]
    assert "scanner.report.model" in edges["scanner.report.sarif"]
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_sandbox_never_imports_scanner() -> None:
    wrong = sorted(f"{module} imports {name}" for module, names in GRAPH.items() if module.startswith("sandbox")
                   for name in names if name == "scanner" or name.startswith("scanner."))
    assert wrong == []


def test_no_import_cycle() -> None:
    assert _cycles(_internal(GRAPH)) == []


@pytest.mark.parametrize("prefix", PURE_PREFIXES)
def test_rules_and_views_never_reach_the_engine(prefix: str) -> None:
    edges = _internal(GRAPH)
    wrong = []
    for module in (m for m in MODULES if m == prefix or m.startswith(prefix + ".")):
        reached = _reaches(module, edges, GRAPH)
        engine = sorted(n for n in reached if n.split(".")[0] in ENGINE_MODULES)
        if engine:
            wrong.append(f"{module} reaches {', '.join(engine)}")
    assert wrong == []


def test_every_package_ships_in_the_wheel() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    listed = set(config["packages"])
    folders = {_module_name(p) for package in PACKAGES for p in (ROOT / package).rglob("__init__.py")}
    assert folders - listed == set(), "package folders missing from [tool.setuptools] packages"
    assert config["package-dir"]["sandbox.image_contexts"] == "images"
    assert "sandbox.image_contexts" in listed



def _other_sources() -> list[Path]:
    """Python outside the two packages that the house rules cover too: the image scripts and the CI scripts."""
    return sorted([*(ROOT / "images").rglob("*.py"), *(ROOT / "scripts").rglob("*.py")])


def test_no_function_is_too_long() -> None:
    long = []
    for path in [*MODULES.values(), *_other_sources()]:
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1 if node.end_lineno else 0
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {lines} lines")
    assert long == []


def test_no_module_is_too_large() -> None:
    large = sorted(f"{p.relative_to(ROOT)}: {n} lines" for p in [*MODULES.values(), *_other_sources()]
                   if (n := len(p.read_text("utf-8").splitlines())) > MAX_MODULE_LINES)
    assert large == []


HEAVY = ("rich", "pydantic", "docker", "mcp", "cryptography", "requests", "sigstore", "httpx", "celery", "kombu",
         "redis")


@pytest.mark.parametrize("argv", [["--version"], ["--help"]])
def test_building_the_app_loads_no_heavy_package(argv: list[str]) -> None:
    """`--version` and `--help` build every command without importing what only running one needs: the report model
    (pydantic), rich, Docker, mcp, signing. (typer's help is drawn with rich; typer parses a command's parameters
    with pydantic, so those load once a command runs.)"""
    import subprocess
    import sys

    code = ("import sys\nfrom scanner.cli.app import main\nsys.argv = ['mcp-sandbox', *sys.argv[1:]]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(' '.join(sorted({m.split('.')[0] for m, v in sys.modules.items() if v is not None})), "
            "file=sys.stderr)")  # a None entry blocks an import (scanner/cli/app.py): nothing is loaded
    result = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
    loaded = set(result.stderr.split("\n")[-2].split())
    allowed = {"rich"} if "--help" in argv else set()
    assert "scanner" in loaded and "typer" in loaded  # the probe read the right process
    assert sorted(set(HEAVY) & loaded - allowed) == []
