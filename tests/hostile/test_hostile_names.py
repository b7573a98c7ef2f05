"""Names from files are data: whatever a machine, workload, operator, ONNX graph or node, run or
case is called, accelsim creates no file outside the folder the user named, prints no raw ESC
byte, and keeps the original name inside the files it writes.

Each entry point of ``hostile_names.py`` runs in this process (``accelsim.cli.main``) on
input files holding one hostile name of :data:`~hostile_names.NAMES`; the whole tree under the
test's root is listed before and after, and nothing may appear outside the case's ``out``
folder.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import pandas as pd
import pytest
from hostile_names import DEPTH, NAMES, NameCase, cases, kept_form

from accelsim.cli import main

ENTRIES = [c.entry for c in cases("x")]


def _tree(root: Path) -> set[Path]:
    return set(root.rglob("*"))


def _write(case: NameCase, d: Path) -> None:
    for rel, body in case.files.items():
        p = d / rel
        if callable(body):
            body(p)
        elif isinstance(body, bytes):
            p.write_bytes(body)
        else:
            p.write_text(body.replace("{d}", str(d)), encoding="utf-8")


def _strings(doc: object):
    """Every string inside a JSON document."""
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for k, v in doc.items():
            yield k
            yield from _strings(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _strings(v)


def _kept(path: Path, how: str, name: str) -> bool:
    """Whether the file at ``path`` keeps ``name`` in the form ``how`` asks for."""
    if how == "exists":
        return path.is_file() and path.stat().st_size > 0
    want = kept_form(how, name)
    if how == "csv":
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
        return any((table[c] == want).any() for c in ("layer", "machine", "workload")
                   if c in table)
    if how == "json":
        return want in set(_strings(json.loads(path.read_text(encoding="utf-8"))))
    return want in path.read_text(encoding="utf-8")


def run_case(case: NameCase, root: Path, monkeypatch) -> tuple[int, str, str, Path]:
    """Run one case under ``root``; (exit code, stdout, stderr, its out folder), after
    checking that nothing appeared outside that out folder."""
    d = root.joinpath(*[f"level{i}" for i in range(DEPTH)], "case")
    out = d / "out"
    out.mkdir(parents=True)
    _write(case, d)
    monkeypatch.chdir(d)
    before = _tree(root)
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        rc = main([a.replace("{d}", str(d)) for a in case.argv])
    created = {p for p in _tree(root) - before if out not in p.parents}
    assert not created, f"created outside {out}: {sorted(map(str, created))[:5]}"
    return rc, stdout.getvalue(), stderr.getvalue(), out


@pytest.mark.parametrize("label", list(NAMES))
@pytest.mark.parametrize("entry", ENTRIES)
def test_a_hostile_name_writes_only_under_out_prints_no_escape_and_is_kept(
        entry, label, tmp_path, monkeypatch):
    name = NAMES[label](tmp_path)
    case = next(c for c in cases(name) if c.entry == entry)
    rc, stdout, stderr, out = run_case(case, tmp_path, monkeypatch)
    assert rc in case.exit_codes, stderr[-2000:]
    assert "\x1b" not in stdout and "\x1b" not in stderr
    assert "\x9b" not in stdout and "\x9b" not in stderr
    assert "Traceback" not in stderr
    if rc == 2:
        assert len([ln for ln in stderr.splitlines() if ln.strip()]) == 1, stderr
    for pattern, how in case.checks:
        found = sorted(out.glob(pattern))
        assert found, f"{pattern} not written under {out}: {sorted(out.rglob('*'))}"
        for path in found:
            assert _kept(path, how, name), f"{path.name} does not keep the name ({how})"
    assert not (tmp_path / "outside_absolute").exists()


def test_the_corpus_reaches_every_entry_point_with_every_hostile_name():
    for entry in ("run.systolic", "run.gpu", "op", "energy", "roofline", "compare", "place",
                  "sweep", "scalesim", "validate", "onnx"):
        assert entry in ENTRIES
    flags = {a for c in cases("x") for a in c.argv}
    assert {"--out", "--trace", "--report", "--plot"} <= flags
    for label in ("dotdot", "absolute", "backslash", "escape", "long", "unicode"):
        assert label in NAMES
    assert len(NAMES["long"](Path("/r"))) == 5000
    assert "\x1b" in NAMES["escape"](Path("/r"))


def test_the_outside_check_sees_a_file_written_outside_out(tmp_path, monkeypatch):
    """The tree comparison is not vacuous: a case that writes beside its out folder fails."""
    case = NameCase("x", ["run", "{d}/m.yaml"])

    def fake_main(argv):
        Path(argv[1]).with_name("stray.txt").write_text("x")
        return 0

    monkeypatch.setattr(sys.modules[__name__], "main", fake_main)
    with pytest.raises(AssertionError, match="created outside"):
        run_case(case, tmp_path, monkeypatch)
