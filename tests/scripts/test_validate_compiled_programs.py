"""scripts/validate/validate_compiled_programs.py can fail: on a synthetic run-13 file (one tiny
case, its "measurements" made up from the model's own figures, scaled) it passes, misses, and
refuses a missing file. No measured data is involved (run 13 is scored once, on the device's
file)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts" / "validate"
CASE = {"case": "encoder_tiny", "program": "encoder", "params": {"batch": 1, "seq": 16,
                                                                "layers": 1}}


def _module():
    spec = importlib.util.spec_from_file_location("validate_compiled_programs",
                                                  SCRIPTS / "validate_compiled_programs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _file(tmp_path: Path, scale: float, kernels: float, modelled: dict) -> Path:
    case = dict(CASE, compiled_s=modelled["compiled_s"] * scale,
                eager_s=modelled["eager_s"],
                compiled_kernels={"count": round(modelled["kernels"] * kernels)})
    path = tmp_path / "run13.json"
    path.write_text(json.dumps({"run": 13, "cases": [case]}))
    return path


def test_scores_pass_and_miss_and_refuse_a_missing_file(tmp_path, capsys):
    mod = _module()
    modelled = mod.evaluate(CASE)
    assert modelled["kernels"] < modelled["eager_kernels"]
    assert mod.main(["--data", str(_file(tmp_path, 1.05, 1.0, modelled))]) == 0
    assert mod.main(["--data", str(_file(tmp_path, 1.5, 1.0, modelled))]) == 1
    assert mod.main(["--data", str(_file(tmp_path, 1.0, 2.0, modelled))]) == 1
    with pytest.raises(SystemExit) as exc:
        mod.main(["--data", str(tmp_path / "absent.json")])
    assert exc.value.code == 2
    assert "no such file" in capsys.readouterr().err
