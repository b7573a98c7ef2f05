"""Packaging: the wheel carries the built-in machines, energy tables and workloads.

The top-level ``configs/`` and ``workloads/`` are the one copy; ``pyproject.toml`` maps them
into the wheel as ``accelsim/_builtin/...`` and :mod:`accelsim.files` reads them there through
``importlib.resources``. The slow test builds the wheel, installs it (not editable) into a fresh
venv, and runs the CLI from a folder outside the checkout.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def listed_packages() -> set[str]:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return set(config["tool"]["setuptools"]["packages"])


def test_every_package_and_builtin_folder_is_listed_for_the_wheel():
    """``packages`` is a list (two trees live outside accelsim/): every folder of accelsim/
    with an ``__init__.py``, accelsim/data, and every folder of configs/ and workloads/
    holding files must be in it, or the wheel silently lacks them."""
    want = {".".join(p.parent.relative_to(ROOT).parts)
            for p in (ROOT / "accelsim").rglob("__init__.py")}
    want |= {"accelsim.data", "accelsim._builtin.configs", "accelsim._builtin.workloads"}
    for top in ("configs", "workloads"):
        for d in [ROOT / top, *sorted(p for p in (ROOT / top).rglob("*") if p.is_dir())]:
            if any(f.is_file() for f in d.iterdir()) and "__pycache__" not in d.parts:
                want.add(".".join(("accelsim", "_builtin", *d.relative_to(ROOT).parts)))
    assert want == listed_packages()


def test_a_checkout_reads_the_top_level_folders():
    from accelsim.files import config_dir, packaged_root, project_root

    if packaged_root() is not None:
        pytest.skip("running from an installed wheel")
    assert project_root() == ROOT
    assert (config_dir("hardware") / "tpu_v4.yaml").is_file()
    assert (config_dir("workloads") / "resnet50_convs.yaml").is_file()
    assert (config_dir("scalesim") / "scale.cfg").is_file()


def test_relative_builtin_paths_work_from_any_folder(tmp_path, monkeypatch):
    """``configs/...`` and ``workloads/...`` paths of the README resolve to the built-ins when
    the current folder lacks them; a file of the same relative path in the folder wins."""
    from accelsim.files import config_dir, locate, resolve_path

    monkeypatch.chdir(tmp_path)
    cfg = locate("configs/scalesim/scale.cfg")
    assert cfg == config_dir("scalesim") / "scale.cfg" and cfg.is_file()
    assert (resolve_path("workloads/resnet18.yaml", "workloads")
            == config_dir("workloads") / "resnet18.yaml")
    assert locate("nope/x.yaml") == Path("nope/x.yaml")
    mine = tmp_path / "configs" / "scalesim" / "scale.cfg"
    mine.parent.mkdir(parents=True)
    mine.write_text("[general]\n")
    assert locate("configs/scalesim/scale.cfg") == Path("configs/scalesim/scale.cfg")


@pytest.mark.slow
def test_a_wheel_installed_in_a_fresh_venv_runs_outside_the_checkout(tmp_path):
    """``python -m build --wheel``; ``pip install`` it (dependencies from the package index)
    into a new venv; ``accelsim list`` and ``accelsim run`` from a folder outside the checkout
    find the built-in machines and workloads. About 60-90 s (most of it pip)."""
    pytest.importorskip("build")
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)],
                   check=True, capture_output=True, text=True, timeout=600)
    wheel = next(dist.glob("accelsim-*.whl"))
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    work = tmp_path / "elsewhere"
    work.mkdir()
    # no PYTHONPATH: the checkout (and the egg-info the build leaves there) must stay invisible
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ACCELSIM_HOME")}
    env["MPLBACKEND"] = "Agg"
    pip = subprocess.run([str(bindir / "python"), "-m", "pip", "install", "-q", str(wheel)],
                         capture_output=True, text=True, cwd=work, env=env, timeout=900)
    assert pip.returncode == 0, pip.stderr[-2000:]

    def accelsim(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(bindir / "accelsim"), *args], capture_output=True, text=True,
                              cwd=work, env=env, timeout=300)

    listing = accelsim("list")
    assert listing.returncode == 0, listing.stderr
    for name in ("tpu_v4", "h100", "eyeriss", "resnet50", "bert_base_encoder", "scaled_7nm"):
        assert name in listing.stdout, name
    run = accelsim("run", "tpu_v4", "resnet18", "--mode", "analytic")
    assert run.returncode == 0, run.stderr
    assert "total:" in run.stdout and "pJ/MAC" in run.stdout and "scaled_7nm" in run.stdout
    gpu = accelsim("run", "h200", "resnet18")  # the GPU path reads configs/lowering
    assert gpu.returncode == 0, gpu.stderr
    # the README's quick start names built-in files by their checkout paths
    scalesim = accelsim("scalesim", "-c", "configs/scalesim/scale.cfg", "-t",
                        "workloads/scalesim/resnet18.csv", "-p", "scalesim_out")
    assert scalesim.returncode == 0, scalesim.stderr
    assert any((work / "scalesim_out").rglob("COMPUTE_REPORT.csv"))
    validate = accelsim("validate")
    assert validate.returncode == 0 and validate.stdout.strip().endswith("0 failed")
    where = subprocess.run([str(bindir / "python"), "-c",
                            "import accelsim.files as f; print(f.project_root())"],
                           capture_output=True, text=True, cwd=work, env=env, timeout=60)
    assert where.stdout.strip().endswith(os.path.join("accelsim", "_builtin"))
    assert not str(where.stdout).startswith(str(ROOT))
