"""The layering of ARCHITECTURE.md holds (import-linter contract in pyproject.toml), no module
of accelsim imports itself back through others (no import cycle), and the code is ruff clean.
They run as tests so that CI fails on a violation."""

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    exe = Path(sys.executable).with_name(name)
    if exe.exists():
        return str(exe)
    found = shutil.which(name)
    if not found:
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
    return found


def test_layers_contract_is_kept():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([_tool("lint-imports")], cwd=ROOT, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout[-3000:]


def test_ruff_is_clean():
    r = subprocess.run([_tool("ruff"), "check", "accelsim", "tests", "scripts"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:]


def _is_type_checking(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``): imports for annotations only."""
    if not isinstance(node, ast.If):
        return False
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or \
        (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> accelsim modules it imports at run time, from every ``import`` statement in
    its source (function-level imports included; ``from pkg import name`` counts ``pkg.name``
    when that is a module; imports under ``if TYPE_CHECKING:`` are annotations only)."""
    mods: dict[str, Path] = {}
    for p in package.rglob("*.py"):
        parts = list(p.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = p
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        tree = ast.parse(path.read_text(), str(path))
        typing_only = {id(n) for block in ast.walk(tree) if _is_type_checking(block)
                       for stmt in block.body for n in ast.walk(stmt)}
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = pkg.split(".")[:len(pkg.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            graph[mod].update(n for n in names if n in mods and n != mod)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(sorted(comp))
    return out


def test_the_cycle_finder_finds_a_cycle(tmp_path):
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert sorted(map(len, strongly_connected(g))) == [1, 3]
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from pkg import b\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                              "    from pkg.c import C\nimport pkg.a\n")
    (pkg / "c.py").write_text("from pkg import b\n")
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg", "pkg.b"} and graph["pkg.b"] == {"pkg.a"}
    assert [c for c in strongly_connected(graph) if len(c) > 1] == [["pkg.a", "pkg.b"]]


def test_no_import_cycle_inside_accelsim():
    graph = import_graph(ROOT / "accelsim")
    assert len(graph) > 100 and graph["accelsim.api.placement"]  # the graph was read
    cycles = [c for c in strongly_connected(graph) if len(c) > 1]
    assert not cycles, f"import cycles: {cycles}"


@pytest.mark.parametrize("required, outcome", [("1", "error"), ("", "skipped")])
def test_a_missing_parity_peer_fails_when_peers_are_required(tmp_path, required, outcome):
    """CI sets ACCELSIM_REQUIRE_PEERS=1: then the parity tests' "peer missing" is an error,
    not a skip."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), ACCELSIM_REQUIRE_PEERS=required,
               ACCELSIM_SCALESIM_PYTHON=str(tmp_path / "no-python"))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m",
                        "slow", "-k", "stall_free and os_8x8_gemm",
                        "tests/reference/test_scalesim_parity.py"],
                       cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
    summary = r.stdout.strip().splitlines()[-1]
    assert f"1 {outcome}" in summary and "passed" not in summary, r.stdout[-2000:]


DISPATCHERS = ("accelsim/cli/run.py", "accelsim/api/model_run.py", "accelsim/api/simulate.py")
"""Modules that run whole workloads on any machine: they dispatch through
``accelsim.devices.device_for`` and never decide by the machine's kind themselves."""


def kind_switches(source: str) -> list[int]:
    """Lines where ``source`` decides by machine kind: a comparison involving a machine-kind
    name (``"gpu"``, ``"systolic"``...), a ``.kind`` attribute or ``getattr(x, "kind")``, or an
    ``isinstance`` test against a machine config class."""
    from accelsim.config.build import DEVICE_KINDS
    from accelsim.config.registry import KINDS as ALL_KINDS

    kinds = set(ALL_KINDS) | set(DEVICE_KINDS)
    classes = {cls.__name__ for cls in DEVICE_KINDS.values()}

    def names_kind(node: ast.AST) -> bool:
        for n in ast.walk(node):
            if isinstance(n, ast.Constant) and n.value in kinds:
                return True
            if isinstance(n, ast.Attribute) and n.attr == "kind":
                return True
            if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "getattr" and any(
                    isinstance(a, ast.Constant) and a.value == "kind" for a in n.args):
                return True
        return False

    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and names_kind(node):
            lines.append(node.lineno)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance":
            if {getattr(n, "id", "") for n in ast.walk(node.args[1])} & classes:
                lines.append(node.lineno)
    return sorted(lines)


def test_the_kind_switch_finder_finds_switches():
    src = ("gpu = machine.kind == 'gpu'\n"
           "if getattr(m, 'kind', '') in ('gpu', 'cpu'): pass\n"
           "if not isinstance(m, SystolicMachine): pass\n"
           "if args.mode == 'event': pass\n")
    assert kind_switches(src) == [1, 2, 3]


@pytest.mark.parametrize("path", DISPATCHERS)
def test_whole_workload_runs_dispatch_through_the_device_registry(path):
    """`accelsim run`, `simulate` and `run_model` ask `device_for(machine)`: a new machine
    kind is one devices/ module and its YAML, with no branch to add here."""
    src = (ROOT / path).read_text()
    assert "device_for" in src
    assert kind_switches(src) == [], f"{path} decides by machine kind"


def unnamed_modules(root: Path = ROOT) -> list[str]:
    """Modules of ``accelsim/`` that ARCHITECTURE.md does not name: a module ``P/.../m.py``
    counts as named when its path below ``accelsim/`` is in the file, or its path below its
    top-level package (``.../m.py``) is a code span in the rooms-table row whose first cell
    names that package. Package ``__init__.py`` files are their room."""
    import re

    text = (root / "ARCHITECTURE.md").read_text()
    rows: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("| `"):
            for name in re.findall(r"`([a-z_]+)`", line.split(" | ")[0]):
                rows[name] = rows.get(name, "") + line
    missing = []
    for f in sorted((root / "accelsim").rglob("*.py")):
        rel = f.relative_to(root / "accelsim")
        if "__pycache__" in rel.parts or f.name == "__init__.py":
            continue
        row = rows.get(rel.parts[0].removesuffix(".py"), "")
        shown = "/".join(rel.parts[1:]) if len(rel.parts) > 1 else rel.name
        if rel.as_posix() in text or re.search(rf"`{re.escape(shown)}[` ]", row):
            continue
        missing.append(rel.as_posix())
    return missing


def test_architecture_names_every_module():
    assert unnamed_modules() == [], "name these modules in ARCHITECTURE.md's rooms table"


def test_the_unnamed_module_finder_finds_a_new_module(tmp_path):
    (tmp_path / "accelsim" / "hw").mkdir(parents=True)
    (tmp_path / "accelsim" / "hw" / "named.py").write_text("")
    (tmp_path / "accelsim" / "hw" / "fresh.py").write_text("")
    (tmp_path / "ARCHITECTURE.md").write_text("| `hw` | models | `named.py` |\n")
    assert unnamed_modules(tmp_path) == ["hw/fresh.py"]
