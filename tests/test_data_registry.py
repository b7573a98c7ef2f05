"""The registry of validation data (scripts/data/REGISTRY.yaml, scripts/data_registry.py).

Every data file has a role and its provenance; fitting code reads only calibration data, and
only through ``data_registry.fit_data`` (held here statically, on the scripts' syntax trees,
and dynamically, on the helper)."""

from __future__ import annotations

import ast
import importlib
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
DATA = SCRIPTS / "data"
FIT_SCRIPTS = sorted([*(SCRIPTS / "validate").glob("validate_*.py"),
                      *(SCRIPTS / "fit").glob("fit_*.py")])
"""Every script that may hold a fit: its ``fit*`` functions are fitting functions."""
EXTRA_FITS = {"validate_e2e.py": ("floor_split",)}
"""Fitting functions not named ``fit*`` (``floor_split``: ``compute.reduce_round_trips``)."""
IO_ATTRS = {"read_text", "read_bytes", "open", "read_csv", "read_json", "read_parquet",
            "load", "loads", "glob", "iterdir"}
"""Attribute calls that read a file (``json.load(s)`` included)."""
IO_NAMES = {"open", "DATA", "NCCL_DATA", "REGISTRY", "load_measurements"}
"""Names whose use in a fitting function means it reaches a data file by itself."""


def _module(name: str):
    """``scripts/<name>.py`` or ``scripts/validate/<name>.py`` imported by name, both folders
    on the path (as the scripts import each other)."""
    for d in (SCRIPTS, SCRIPTS / "validate"):
        if str(d) not in sys.path:
            sys.path.insert(0, str(d))
    return importlib.import_module(name)


@pytest.fixture(scope="module")
def reg():
    return _module("data_registry")


def test_every_data_file_has_an_entry_with_its_provenance_and_a_valid_role(reg):
    entries = reg.load_registry()
    files = sorted(p.name for p in DATA.iterdir() if p.is_file() and p.name != "REGISTRY.yaml")
    assert files and [f for f in files if f not in entries] == []
    for name, e in entries.items():
        assert all(e.get(k) is not None for k in ("path", "role", "measured", "when", "machine",
                                                  "software")), name
        assert e["role"] in reg.ROLES, name
        if not e["external"]:
            assert (ROOT / e["path"]).is_file() and Path(e["path"]).name == name, name
            assert re.match(r"\d{4}-\d{2}-\d{2}", str(e["added"])), name
        for part in (e.get("parts") or {}).values():
            assert part["role"] in reg.ROLES, name
    local = [n for n, e in entries.items() if not e["external"]]
    packaged = [n for n in local if entries[n]["path"].startswith("accelsim/data/")]
    assert sorted(set(local) - set(packaged)) == files  # no entry for a file that is not there
    assert all(entries[n]["path"] == f"accelsim/data/{n}" for n in packaged)  # package data


def test_external_sets_are_listed_held_out_with_the_path_a_copy_would_take(reg):
    ext = {n: e for n, e in reg.load_registry().items() if e["external"]}
    assert len(ext) >= 4 and all(e["role"] == "held-out" for e in ext.values())
    assert all(e["path"].startswith("scripts/data/") for e in ext.values())
    shared = Path("/work/shared/reference/external")
    if shared.is_dir():
        assert sorted(p.name for p in shared.iterdir() if p.is_dir()) == sorted(ext)


def test_dev_data_says_since_when_and_why(reg):
    """Dev entries and parts carry dev_since and a reason; the sets the issue names as having
    guided model choices are dev (their fitted parts, if any, calibration)."""
    entries = reg.load_registry()
    for name in ("h200_e2e_run2.json", "h200_e2e_run3.json", "h200_e2e_run4.json",
                 "h200_e2e_run7.json", "h200_heldout.json"):
        assert entries[name]["role"] == "dev", name
        assert entries[name]["dev_since"] and entries[name]["reason"], name
    assert reg.role_of("h200_heldout.json", part="clock_under_load") == "calibration"
    assert reg.role_of("h200_e2e_run2.json", part="dev_models") == "calibration"


def test_the_helper_refuses_any_data_but_calibration(reg):
    assert reg.fit_data("h200_e2e_run7L.json")["compiled"]
    env = reg.fit_data("h200_heldout.json", part="env")
    assert list(env["sections"]) == ["env"]  # the section alone, not the dev figures beside it
    with pytest.raises(reg.DataRoleError, match="h200_e2e_run7.json is dev data"):
        reg.fit_data("h200_e2e_run7.json")
    with pytest.raises(reg.DataRoleError, match="held-out"):
        reg.fit_files("h200x2_collectives.json")
    with pytest.raises(reg.DataRoleError, match="dev data"):
        reg.fit_files("h200_heldout.json")  # a dev file, although it has calibration parts
    with pytest.raises(reg.DataRoleError, match="name the calibration part"):
        reg.fit_files("h200_e2e.json")      # calibration, but it holds a dev part too
    with pytest.raises(reg.DataRoleError, match="ops_batch32"):
        reg.fit_files("h200_e2e.json", part="ops_batch32")
    with pytest.raises(reg.DataRoleError, match="not in REGISTRY.yaml"):
        reg.fit_files("h200_new_run.json")


def test_a_bad_registry_entry_is_a_one_line_config_error(reg, tmp_path):
    from accelsim.errors import ConfigError

    bad = tmp_path / "REGISTRY.yaml"
    bad.write_text("files:\n  x.json: {path: scripts/data/x.json, role: heldout, measured: m,"
                   " when: w, machine: m, software: s, added: null, first_compared: null}\n")
    with pytest.raises(ConfigError, match=r"files.x.json.role = .*heldout.*expected one of"):
        reg.load_registry(bad)
    bad.write_text("files:\n  x.json: {path: p, role: dev, measured: m, when: w, machine: m,"
                   " software: s, added: null, first_compared: null}\n")
    with pytest.raises(ConfigError, match="dev_since"):
        reg.load_registry(bad)


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def _calls(fn: ast.AST) -> set[str]:
    return {n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)}


def _io(fn: ast.AST) -> list[str]:
    """Where ``fn`` reaches a file by itself (an I/O call, or a data path name)."""
    out = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and n.func.attr in IO_ATTRS:
            out.append(f"line {n.lineno}: .{n.func.attr}()")
        if isinstance(n, ast.Name) and n.id in IO_NAMES:
            out.append(f"line {n.lineno}: {n.id}")
    return out


def _reaches(funcs: dict[str, ast.FunctionDef], name: str, todo: set[str]) -> set[str]:
    """Module functions reachable by calls from ``name`` (itself included)."""
    if name in todo or name not in funcs:
        return todo
    todo.add(name)
    for callee in _calls(funcs[name]):
        _reaches(funcs, callee, todo)
    return todo


def _fitting_functions():
    for path in FIT_SCRIPTS:
        tree = ast.parse(path.read_text())
        funcs = _functions(tree)
        names = [n for n in funcs if n.startswith("fit")] + list(EXTRA_FITS.get(path.name, ()))
        yield path, funcs, names


def test_fitting_functions_open_files_only_through_fit_data():
    """Each fitting function of scripts/ (``fit*``, and :data:`EXTRA_FITS`), and every module
    function it calls, reads no file itself; and each obtains data through ``fit_data``
    (directly, or through a function of its module that does)."""
    seen = 0
    for path, funcs, names in _fitting_functions():
        for name in names:
            seen += 1
            closure = _reaches(funcs, name, set())
            bad = {f: _io(funcs[f]) for f in closure if _io(funcs[f])}
            assert not bad, f"{path.name}:{name} reaches files without fit_data: {bad}"
            assert any("fit_data" in _calls(funcs[f]) for f in closure), \
                f"{path.name}:{name} gets no data through data_registry.fit_data"
    assert seen >= 12  # the fits of validate_e2e, validate_gpu(_conv), links, eyeriss, power


def test_the_static_check_catches_a_fit_that_reads_a_file_itself():
    tree = ast.parse("def fit():\n    return json.loads((DATA / 'h200_e2e_run7.json')"
                     ".read_text())\n")
    assert len(_io(_functions(tree)["fit"])) == 3


def test_whole_model_groups_are_labelled_with_the_role_of_their_data(reg):
    """validate_e2e's group of every case begins with the registry role of its file or of a
    part of it (``dev-run3``, ``calibration-run2``), never with a role the data has not."""
    e2e = _module("validate_e2e")
    every = set()
    for name, group_of in e2e.DATASETS:
        entry = reg.entry_of(name)
        roles = {entry["role"]} | {p["role"] for p in (entry.get("parts") or {}).values()}
        data = json.loads((DATA / name).read_text())
        groups = {group_of(c) for c in data["models"] + data.get("compiled", [])}
        assert groups, name
        every |= groups
        for g in groups:
            assert any(g.startswith(r + "-") for r in roles), (name, g, roles)
    assert {"calibration-run2", "dev-run2", "dev-run3", "dev-run7"} <= every
