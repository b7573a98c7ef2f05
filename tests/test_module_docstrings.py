"""Every ``Imports:`` line of a module docstring in ``accelsim/`` is true (issue 26).

A module's docstring may have a paragraph that starts ``Imports:``; it says which accelsim
modules the module uses, named relative to ``accelsim`` (``units``, ``config.schema``;
``accelsim`` alone is the root package, for ``from accelsim import __version__``). The rule:

* **What a module imports.** Every ``import``/``from ... import`` statement in its source,
  at module level or inside a function (or under ``if TYPE_CHECKING:``): ``import
  accelsim.x.y`` is ``x.y``; ``from accelsim.x import y`` is ``x.y`` when ``accelsim/x/y``
  is a module or package, else ``x`` (a name defined in, or re-exported by, ``x``); ``from
  accelsim import y`` likewise (``y`` or the root ``accelsim``); relative imports are
  resolved against the module's package first. A module importing itself does not count.
  ``importlib.import_module`` calls are not import statements and do not count.
* **What a package's line describes.** The line of a package ``__init__.py`` states what the
  package uses (ARCHITECTURE.md: "each package's ``__init__.py`` docstring states its job and
  what it may import"): the modules outside the package that any of its modules, the
  ``__init__`` and subpackages included, imports. Imports inside the package do not count.
* **What a listed name covers.** In a module's line, ``x.y`` covers exactly ``x.y``, and
  ``x.*`` covers ``x`` and every module under it: a listed package ``hw`` covers an import
  of ``hw`` itself, not of ``hw.gpu.ops``. In a package's line (a statement about a whole
  package, usually at package granularity), ``x`` covers ``x`` and every module under it.
* **True.** (a) every import is covered by a listed name; (b) every listed accelsim name
  covers at least one import (no stale names).
* **Reading the line.** The paragraph's text after ``Imports:`` up to the first ``.`` that
  ends a sentence (followed by a space or the paragraph's end, outside parentheses) is the
  list; what follows (``Never workload/, hw/ or anything above.``) is prose and not read.
  Items are separated by ``,``, ``;`` and ``and``; parenthesised remarks (``(lazily)``,
  ``(stdlib only otherwise)``) are ignored. A one-word item whose first dotted part is an
  accelsim module or package (``accelsim/<part>.py`` or ``accelsim/<part>/``) is an accelsim
  name and must name an existing module (``x.*``: an existing package). Any other one-word
  item must be a library the line may mention: a stdlib module, one of :data:`LIBRARIES`,
  or one of :data:`WORDS`; so a misspelled accelsim name fails. Items of several words
  (``the case modules``, ``nothing of accelsim``) are prose and ignored.

A fixer script kept outside the repository (issue 26) rewrites failing lines with this
module's functions, so it follows this rule.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "accelsim"

LIBRARIES = frozenset({
    "numpy", "pandas", "torch", "simpy", "numba", "yaml", "pyyaml", "matplotlib", "pyarrow",
    "dask", "onnx", "scipy", "transformers", "pytest",
})
"""Third-party libraries a line may name (not checked against the imports)."""

WORDS = frozenset({"stdlib", "nothing"})
"""Other one-word items a line may hold."""

_NAME = re.compile(r"(?:[A-Za-z_]\w*)(?:\.(?:[A-Za-z_]\w*))*(?:\.\*)?")


@dataclass
class Item:
    """One item of an ``Imports:`` list: its words (remarks removed) and its remarks."""
    core: str
    remarks: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The item as a name: backquotes removed."""
        return self.core.strip("`")


@dataclass
class Listing:
    """A parsed ``Imports:`` paragraph: the items of its list, the prose after the list."""
    items: list[Item]
    prose: str


def module_table(package: Path = PACKAGE) -> dict[str, Path]:
    """Module name relative to ``accelsim`` (``config.schema``; the root is ``accelsim``)
    -> its file."""
    out = {}
    for p in sorted(package.rglob("*.py")):
        parts = list(p.relative_to(package).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts) or "accelsim"] = p
    return out


def is_package(name: str, modules: dict[str, Path]) -> bool:
    """``name`` is a package (the root, or a module with modules under it)."""
    return name == "accelsim" or any(m.startswith(name + ".") for m in modules)


def _relative(absolute: str) -> str | None:
    """``accelsim.x.y`` -> ``x.y``; ``accelsim`` -> ``accelsim``; other modules -> None."""
    if absolute == "accelsim":
        return "accelsim"
    if absolute.startswith("accelsim."):
        return absolute[len("accelsim."):]
    return None


def _child(parent: str, name: str) -> str:
    return name if parent == "accelsim" else f"{parent}.{name}"


def imports_of(tree: ast.AST, module: str, package: bool, modules: dict[str, Path]) -> set[str]:
    """The accelsim modules that ``module`` (a package's ``__init__`` when ``package``)
    imports, by the rule of this file's docstring."""
    if package:
        own_package = module
    else:
        own_package = module.rpartition(".")[0] or "accelsim"
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                rel = _relative(alias.name)
                if rel is not None:
                    out.add(rel)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = [] if own_package == "accelsim" else own_package.split(".")
                if node.level - 1 > len(parts):
                    raise ValueError(f"{module}: relative import above accelsim")
                parts = parts[:len(parts) - (node.level - 1)]
                if node.module:
                    parts += node.module.split(".")
                base = ".".join(parts) or "accelsim"
            else:
                base = _relative(node.module or "")
                if base is None:
                    continue
            for alias in node.names:
                sub = _child(base, alias.name)
                out.add(sub if alias.name != "*" and sub in modules else base)
    out.discard(module)
    return out


def described_imports(module: str, modules: dict[str, Path],
                      trees: dict[str, ast.AST]) -> set[str]:
    """What the ``Imports:`` line of ``module`` describes: its own imports, or for a package
    the imports of all its modules that lie outside it."""
    if module == "accelsim" or not is_package(module, modules):
        return imports_of(trees[module], module, is_package(module, modules), modules)
    inside = [m for m in modules if m == module or m.startswith(module + ".")]
    out: set[str] = set()
    for m in inside:
        out |= imports_of(trees[m], m, is_package(m, modules), modules)
    return {t for t in out if t != module and not t.startswith(module + ".")}


def _find_list_end(text: str) -> int:
    """Index of the ``.`` that ends the list in ``text`` (the part after ``Imports:``), or
    ``len(text)``."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif ch == "." and depth == 0 and (i + 1 == len(text) or text[i + 1].isspace()):
            return i
    return len(text)


def _split_items(text: str) -> list[Item]:
    items: list[Item] = []
    core, remark, depth = "", "", 0
    current: list[str] = []

    def flush() -> None:
        nonlocal core
        words = re.split(r"\s+and\s+", " " + core.strip() + " ")
        words = [w.strip() for w in words if w.strip()]
        if not words:
            if current and items:
                items[-1].remarks.extend(current)
            elif current:
                items.append(Item("", list(current)))
        for k, w in enumerate(words):
            items.append(Item(w, list(current) if k == len(words) - 1 else []))
        core = ""
        current.clear()

    for ch in text:
        if ch == "(":
            if depth == 0:
                remark = ""
            else:
                remark += ch
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
            if depth == 0:
                current.append(remark.strip())
            else:
                remark += ch
        elif depth:
            remark += ch
        elif ch in ",;":
            flush()
        else:
            core += ch
    flush()
    return items


def imports_paragraph(doc: str) -> str | None:
    """The docstring's ``Imports:`` paragraph, its lines joined by spaces, or None."""
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith("Imports:"):
            para = [line.strip()]
            for nxt in lines[i + 1:]:
                if not nxt.strip():
                    break
                para.append(nxt.strip())
            return " ".join(para)
    return None


def parse_listing(paragraph: str) -> Listing:
    """Split an ``Imports:`` paragraph into its list items and the prose after the list."""
    text = paragraph.split("Imports:", 1)[1]
    end = _find_list_end(text)
    return Listing(_split_items(text[:end]), text[end + 1:].strip())


def classify(item: Item, modules: dict[str, Path]) -> str:
    """``accelsim`` (a name to check), ``other`` (a library or word the line may hold),
    ``prose`` (several words), ``empty``, or ``unknown``."""
    word = item.name
    if not word:
        return "empty"
    if " " in word:
        return "prose"
    if not _NAME.fullmatch(word):
        return "unknown"
    first = word.split(".")[0]
    if first == "accelsim" or first in modules:
        return "accelsim"
    if first in LIBRARIES or first in WORDS or first in sys.stdlib_module_names:
        return "other"
    return "unknown"


def accelsim_name(word: str) -> str:
    """A listed accelsim name, relative to ``accelsim`` (``accelsim.x`` -> ``x``)."""
    return word[len("accelsim."):] if word.startswith("accelsim.") else word


def covers(listed: str, target: str, package_line: bool) -> bool:
    """Does the listed name cover the imported module ``target``?"""
    if listed == "accelsim":
        return target == "accelsim"
    if listed.endswith(".*"):
        base = listed[:-2]
        return target == base or target.startswith(base + ".")
    return target == listed or (package_line and target.startswith(listed + "."))


def check(paragraph: str, imports: set[str], modules: dict[str, Path],
          package_line: bool) -> list[str]:
    """What is wrong with an ``Imports:`` paragraph for a module with these imports."""
    listing = parse_listing(paragraph)
    problems = []
    names = []
    for item in listing.items:
        kind = classify(item, modules)
        if kind == "unknown":
            problems.append(f"{item.name!r} is neither an accelsim module nor a known library")
        elif kind == "accelsim":
            name = accelsim_name(item.name)
            base = name[:-2] if name.endswith(".*") else name
            if base not in modules:
                problems.append(f"{item.name!r}: no such accelsim module")
            elif name.endswith(".*") and not is_package(base, modules):
                problems.append(f"{item.name!r}: {base} is not a package")
            else:
                names.append(name)
    unlisted = sorted(t for t in imports if not any(covers(n, t, package_line) for n in names))
    stale = [n for n in names if not any(covers(n, t, package_line) for t in imports)]
    if unlisted:
        problems.append(f"imports unlisted: {', '.join(unlisted)}")
    if stale:
        problems.append(f"lists what it does not import: {', '.join(stale)}")
    return problems


def all_problems(package: Path = PACKAGE) -> tuple[int, int, dict[str, list[str]]]:
    """(modules, modules with an ``Imports:`` line, file -> problems) over ``package``."""
    modules = module_table(package)
    trees = {m: ast.parse(p.read_text(), str(p)) for m, p in modules.items()}
    out: dict[str, list[str]] = {}
    lined = 0
    for m, p in modules.items():
        paragraph = imports_paragraph(ast.get_docstring(trees[m]) or "")
        if paragraph is None:
            continue
        lined += 1
        package_line = m != "accelsim" and is_package(m, modules)
        found = check(paragraph, described_imports(m, modules, trees), modules, package_line)
        if found:
            out[str(p.relative_to(package.parent))] = found
    return len(modules), lined, out


def test_every_imports_line_is_true():
    count, lined, problems = all_problems()
    assert count > 150 and lined > 150  # the package was read
    assert not problems, "\n".join(f"{f}: {'; '.join(p)}" for f, p in problems.items())


# The checker on small synthetic modules, so that it can be seen to fail.

FAKE = {m: Path(m) for m in ("accelsim", "units", "errors", "config", "config.schema",
                             "config.gpu", "hw", "hw.gpu", "hw.gpu.ops", "hw.systolic")}


def _check(source: str, module: str = "hw.systolic", package_line: bool = False) -> list[str]:
    tree = ast.parse(source)
    imports = imports_of(tree, module, package_line, FAKE)
    return check(imports_paragraph(ast.get_docstring(tree) or ""), imports, FAKE, package_line)


def test_a_true_line_passes():
    src = '"""Doc.\n\nImports: units, config.schema (lazily), numpy. Never api."""\n' \
          "import numpy\nfrom accelsim.units import parse\n" \
          "def f():\n    from accelsim.config.schema import Field\n"
    assert _check(src) == []


def test_a_stale_name_fails():
    src = '"""Imports: units, errors."""\nfrom accelsim.units import parse\n'
    assert _check(src) == ["lists what it does not import: errors"]


def test_an_unlisted_import_fails_lazy_ones_included():
    src = '"""Imports: units."""\nfrom accelsim.units import parse\n' \
          "def f():\n    import accelsim.errors\n"
    assert _check(src) == ["imports unlisted: errors"]


def test_a_misspelled_name_fails():
    assert _check('"""Imports: unit."""\n') == [
        "'unit' is neither an accelsim module nor a known library"]
    assert _check('"""Imports: config.shema."""\nimport accelsim.config\n')[0] == \
        "'config.shema': no such accelsim module"


def test_a_listed_package_covers_only_itself_unless_starred():
    src = "from accelsim.hw.gpu import ops\n"
    assert _check('"""Imports: hw."""\n' + src) == [
        "imports unlisted: hw.gpu.ops", "lists what it does not import: hw"]
    assert _check('"""Imports: hw.*."""\n' + src) == []
    assert _check('"""Imports: hw.gpu."""\nfrom accelsim.hw.gpu import plan_op\n') == []


def test_from_accelsim_import_and_relative_imports_resolve():
    src = '"""Imports: accelsim, config, hw.gpu.ops, units."""\n' \
          "from accelsim import __version__, units\nfrom accelsim import config\n" \
          "from .gpu import ops\nfrom . import systolic\n"
    assert _check(src) == []  # `from . import systolic` is the module itself


def test_a_package_line_describes_the_package():
    tree = {"hw": ast.parse('"""Imports: config."""\n'),
            "hw.gpu": ast.parse("from accelsim.hw.gpu.ops import plan_op\n"),
            "hw.gpu.ops": ast.parse("from accelsim.config.gpu import Gpu\nimport accelsim.hw\n"),
            "hw.systolic": ast.parse("def f():\n    from accelsim.units import parse\n")}
    fake = {m: Path(m) for m in tree} | {"config": Path("c"), "config.gpu": Path("g"),
                                         "units": Path("u")}
    imports = described_imports("hw", fake, tree)
    assert imports == {"config.gpu", "units"}
    assert check("Imports: config.", imports, fake, True) == ["imports unlisted: units"]
    assert check("Imports: config, units.", imports, fake, True) == []


@pytest.mark.parametrize("paragraph, names", [
    ("Imports: errors (stdlib only otherwise).", ["errors"]),
    ("Imports: a, b; c (lazily) and d. Prose, e, f.", ["a", "b", "c", "d"]),
    ("Imports: x.*, y (one, two). ``z``.", ["x.*", "y"]),
    ("Imports: validation.seed_cases and the case modules.",
     ["validation.seed_cases", "the case modules"]),
])
def test_the_list_is_read_up_to_the_end_of_its_sentence(paragraph, names):
    assert [i.name for i in parse_listing(paragraph).items] == names
