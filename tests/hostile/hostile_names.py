"""The hostile-input corpus, part 3: hostile *names*, and every entry point that writes files
or prints names.

A name (a machine's ``name:``, a workload's, an operator's, an ONNX graph's or node's, a
SCALE-Sim ``run_name``, a validation case id) is whatever its file says. :data:`NAMES` holds
the hostile ones: path escapes (``../``, an absolute path, ``..\\``), terminal escapes (ESC,
BEL, C1 CSI), a 5000-character name, unicode with a bidirectional override, a spreadsheet
formula and a mathtext expression. Each :class:`NameCase` puts one of them into the files of
one entry point (``accelsim run`` on a systolic machine and on a GPU, ``op``, ``energy``,
``roofline``, ``compare``, ``place``, ``sweep``, ``scalesim``, ``validate``, ONNX import; with
``--out``, ``--trace``, ``--report`` and ``--plot``) and says, per output file, in which form
the original name must be kept inside it (``test_hostile_names.py`` runs and checks them).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from hostile_files import ROOT

from accelsim.safe_text import csv_text, html_text

NAMES: dict[str, Callable[[Path], str]] = {
    "dotdot": lambda root: "../../../../../outside_dotdot",
    "absolute": lambda root: str(root / "outside_absolute"),
    "backslash": lambda root: "..\\..\\..\\outside_backslash",
    "escape": lambda root: "ansi\x1b[2J\x1b]0;pwned\x07\x9b31m\x7fend",
    "long": lambda root: "L" * 5000,
    "unicode": lambda root: "模型-é-\u202egnp.exe-\U0001f642",
    "formula": lambda root: '=HYPERLINK("http://x","y")',
    "mathtext": lambda root: "$\\frac$ x",
}
"""Hostile names, built from the test's root folder (so an absolute name points inside it)."""

DEPTH = 6
"""Folders between the test's root and a case's own folder: every ``../`` name above stays
inside the root, where the test can see what was created."""

Check = tuple[str, str]
"""(output file relative to the case's out folder, or a glob, how the name is kept): ``csv``
(a cell equal to :func:`~accelsim.safe_text.csv_text`), ``json`` (a string equal to the
name), ``html`` (:func:`~accelsim.safe_text.html_text` in the page), ``exists`` (only that the
file is there)."""


@dataclass
class NameCase:
    """One entry point run on files holding one hostile name."""

    entry: str
    argv: list[str]
    files: dict[str, str | bytes | Callable[[Path], None]] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)
    exit_codes: tuple[int, ...] = (0,)
    """Accepted exit codes; 2 means a one-line refusal (e.g. a run_name that is a path)."""


def _machine(base: str, name: str) -> str:
    data = yaml.safe_load((ROOT / "configs" / "hardware" / f"{base}.yaml").read_text())
    data["name"] = name
    return yaml.safe_dump(data, allow_unicode=False)


def _workload(name: str, op_name: str | None = None) -> str:
    ops = [{"op": "gemm", "name": op_name or name, "m": 64, "n": 64, "k": 64},
           {"op": "gemm", "name": "plain", "m": 32, "n": 64, "k": 32}]
    return yaml.safe_dump({"name": name, "ops": ops}, allow_unicode=False)


def _onnx(name: str) -> Callable[[Path], None]:
    def write(p: Path) -> None:
        from onnx import TensorProto, helper

        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 64])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 64])
        w = helper.make_tensor("w", TensorProto.FLOAT, [64, 64], [0.0] * 4096)
        nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name=name)]
        g = helper.make_graph(nodes, name, [x], [y], [w])
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        p.write_bytes(model.SerializeToString())

    return write


def _scalesim_cfg(run_name: str) -> str:
    text = (ROOT / "configs" / "scalesim" / "scale.cfg").read_text()
    return text.replace("run_name = scale_example_run_32x32_ws", f"run_name = {run_name}")


def cases(name: str) -> list[NameCase]:
    """Every entry point, with ``name`` in its input files (``{d}`` = the case folder, whose
    ``out`` subfolder is where the test allows files to appear)."""
    sys_m = _machine("scalesim_default", name)
    gpu_m = _machine("h200", name)
    wl = _workload(name)
    one_line = name.replace("\n", " ")
    no_comma = one_line.replace(",", ";")
    run = ["run", "{d}/m.yaml", "{d}/w.yaml", "--mode", "analytic", "--out", "{d}/out",
           "--trace", "{d}/out/t.json", "--report", "{d}/out/r.html"]
    slash = "/" in name
    return [
        NameCase("run.systolic", run, {"m.yaml": sys_m, "w.yaml": wl},
                 [("*-layers.csv", "csv"), ("*-actions.csv", "csv"), ("t.json", "json"),
                  ("r.html", "html")]),
        NameCase("run.gpu", ["run", "{d}/g.yaml", "{d}/w.yaml", "--out", "{d}/out",
                             "--trace", "{d}/out/t.json"],
                 {"g.yaml": gpu_m, "w.yaml": wl}, [("*-layers.csv", "csv"), ("t.json", "json")]),
        NameCase("run.json", ["run", "{d}/m.yaml", "{d}/w.yaml", "--mode", "analytic", "--json"],
                 {"m.yaml": sys_m, "w.yaml": wl}),
        NameCase("op", ["op", "{d}/m.yaml", "gemm", "--m", "64", "--n", "64", "--k", "64"],
                 {"m.yaml": sys_m}),
        NameCase("op.gpu", ["op", "{d}/g.yaml", "gemm", "--m", "64", "--n", "64", "--k", "64"],
                 {"g.yaml": gpu_m}),
        NameCase("energy", ["energy", "{d}/m.yaml", "{d}/w.yaml", "--out", "{d}/out",
                            "--plot", "{d}/out/e.png"],
                 {"m.yaml": sys_m, "w.yaml": wl}, [("e.png", "exists")]),
        NameCase("roofline", ["roofline", "{d}/m.yaml", "{d}/w.yaml", "--plot", "{d}/out/r.png"],
                 {"m.yaml": sys_m, "w.yaml": wl}, [("r.png", "exists")]),
        NameCase("compare", ["compare", "{d}/w.yaml", "--hw", "{d}/g.yaml"],
                 {"g.yaml": gpu_m, "w.yaml": wl}),
        NameCase("place", ["place", "node_gpu_npu", "{d}/w.yaml"], {"w.yaml": wl}),
        NameCase("sweep", ["sweep", "{d}/s.yaml", "--out", "{d}/out/r.csv", "--workers", "1",
                           "--quiet"],
                 {"m.yaml": sys_m, "w.yaml": wl,
                  "s.yaml": yaml.safe_dump({"hardware": "{d}/m.yaml", "workload": "{d}/w.yaml",
                                            "mode": "analytic",
                                            "parameters": {"compute.array.rows": [16, 32]}})},
                 [("r.csv", "exists")]),
        NameCase("scalesim", ["scalesim", "-c", "{d}/s.cfg", "-t", "{d}/t.csv", "-i", "gemm",
                             "-p", "{d}/out"],
                 {"s.cfg": _scalesim_cfg(one_line),
                  "t.csv": f"Layer, M, N, K,\n{no_comma}, 64, 64, 64,\n"},
                 [] if slash else [("*/COMPUTE_REPORT.csv", "exists")],
                 exit_codes=(2,) if slash else (0,)),
        NameCase("validate", ["validate", "--cases", "{d}/cases.json"],
                 {"cases.json": json.dumps([{"id": name, "kind": "roofline", "inputs": {},
                                             "expected": {"x": 1}}])},
                 exit_codes=(0, 1, 2)),
        NameCase("onnx", ["run", "scalesim_default", "{d}/m.onnx", "--mode", "analytic",
                          "--out", "{d}/out", "--report", "{d}/out/r.html"],
                 {"m.onnx": _onnx(name)}, [("*-layers.csv", "csv"), ("r.html", "html")]),
    ]


def kept_form(how: str, name: str) -> str:
    """The text a file of kind ``how`` must hold for ``name`` (see :data:`Check`)."""
    return {"csv": csv_text(name), "html": html_text(name), "json": name}[how]
