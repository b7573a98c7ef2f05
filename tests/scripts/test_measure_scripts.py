"""The measurement scripts of scripts/measure/ stay runnable where they cannot run: each imports
on a machine without CUDA (nothing touches a GPU before its ``main``), ``--help`` exits 0 with
its usage, and the one harness they share writes its metadata into every JSON file."""

from __future__ import annotations

import importlib.util
import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MEASURE = ROOT / "scripts" / "measure"
SCRIPTS = sorted(p.stem for p in MEASURE.glob("*.py"))


def _module(name: str):
    if str(MEASURE) not in sys.path:
        sys.path.insert(0, str(MEASURE))
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, MEASURE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_every_script_is_listed_in_the_index():
    index = (ROOT / "scripts" / "README.md").read_text()
    assert [s for s in SCRIPTS if f"`{s}.py`" not in index] == []


@pytest.mark.parametrize("name", SCRIPTS)
def test_each_script_imports_without_cuda_and_uses_the_harness(name):
    mod = _module(name)
    assert mod.__doc__, f"{name}.py has no docstring"
    if name != "harness":
        assert "harness" in {getattr(v, "__name__", None) for v in vars(mod).values()}, (
            f"{name}.py does not import the harness")
        assert callable(getattr(mod, "main", None)), f"{name}.py has no main()"


@pytest.mark.parametrize("name", SCRIPTS)
def test_each_script_help_exits_0(name, tmp_path, monkeypatch, capsys):
    """Each script run as ``__main__`` (its own ``if __name__`` block, in this process: torch is
    imported once, not once per script) prints its usage for ``--help``, exits 0, writes
    nothing; the subprocess test below runs one of them as a real command line."""
    _module("harness")  # puts scripts/measure on sys.path, as running a script there does
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setenv("OUT", str(tmp_path / "never"))
    monkeypatch.chdir(tmp_path)
    path = str(MEASURE / f"{name}.py")
    monkeypatch.setattr(sys, "argv", [path, "--help"])
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(path, run_name="__main__")
    assert exit_.value.code in (0, None)
    assert f"usage: {name}.py" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []  # --help measures and writes nothing


def test_a_script_help_exits_0_as_a_real_command_line(tmp_path):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", OUT=str(tmp_path / "never"))
    r = subprocess.run([sys.executable, str(MEASURE / "e2e.py"), "--help"], cwd=tmp_path,
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "usage: e2e.py" in r.stdout
    assert list(tmp_path.iterdir()) == []  # --help measures and writes nothing


def test_write_json_puts_the_metadata_in(tmp_path, monkeypatch):
    h = _module("harness")
    monkeypatch.setattr(h, "_META", None)
    monkeypatch.setenv("MEASURE_SECTIONS", "host")
    monkeypatch.setattr(h, "OUT", str(tmp_path))
    path = h.write_json("x.json", {"cases": [1, 2]})
    doc = json.loads(Path(path).read_text())
    assert Path(path) == tmp_path / "x.json" and not list(tmp_path.glob("*.tmp"))
    assert doc["cases"] == [1, 2]
    meta = doc["meta"]
    assert {"script", "argv", "env", "started_utc", "machine", "software"} <= set(meta)
    assert meta["env"]["MEASURE_SECTIONS"] == "host"
    assert {"cpu", "cpu_count", "os"} <= set(meta["machine"])
    assert meta["software"]["torch"] and meta["software"]["python"]
    assert "cuda" in meta["software"]
    h.write_json(str(tmp_path / "scratch.json"), [1], meta=False)
    assert json.loads((tmp_path / "scratch.json").read_text()) == [1]


def test_cli_sets_the_output_folder(tmp_path):
    h = _module("harness")
    before = h.OUT
    try:
        args = h.cli("doc", [str(tmp_path / "out"), "--profile"], flags=[("--profile", "x")])
        assert args.profile and h.out_path("a.json") == str(tmp_path / "out" / "a.json")
        assert (tmp_path / "out").is_dir()
    finally:
        h.OUT = before


def test_sections_record_errors_and_go_on(capsys):
    h = _module("harness")
    result = {"sections": {}, "errors": {}, "seconds": {}}
    saved = []

    def bad():
        raise ValueError("boom")

    h.run_sections([("bad", bad), ("good", lambda: 3)], result, lambda: saved.append(1))
    assert result["sections"] == {"good": 3} and "boom" in result["errors"]["bad"]
    assert set(result["seconds"]) == {"bad", "good"} and saved == [1, 1]
    h.run_sections([("late", lambda: 1)], result, lambda: None, budget_s=-1.0)
    assert result["errors"]["late"].startswith("skipped")
    assert "== good" in capsys.readouterr().out


def test_host_clock_timings_on_cpu():
    h = _module("harness")
    calls = []
    ts = h.step_seconds(lambda: calls.append(1), 4, warm=2)
    assert len(ts) == 4 and len(calls) == 6 and all(t >= 0 for t in ts)
    issue, drained = h.host_calls_s(lambda: None, 10)
    assert 0 <= issue <= drained
    out = h.time_steps(lambda: None, 3)
    assert out["steps"] == 3 and out["min_s"] <= out["median_s"]


def test_profiling_helpers_run_on_cpu():
    """The profiler paths run where there is no GPU: no kernels, the host's aten ops seen."""
    import torch

    h = _module("harness")
    a = torch.randn(8, 8)
    fn = lambda: torch.relu(a @ a)  # noqa: E731
    prof = h.profile_kernels(fn)
    assert prof["kernels"] == [] and prof["top_level_aten_ops"] >= 2
    assert h.kernel_args(fn, ("grid",)) == [] and h.kernel_events(fn) == []
    events = h.trace_events(h.profile_call(fn, calls=2)[0])
    assert any("aten::relu" in e.get("name", "") for e in events)
    timeline = h.profile_timeline(fn)
    assert timeline["kernels"] == [] and any(r[0] == "aten::relu" for r in timeline["cpu"])
    out = h.time_op(fn, 5)
    assert out["eager_s"] > 0 and out["kernels"] == []
