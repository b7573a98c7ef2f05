"""Differential test: SCALE-Sim 3.0 itself vs ``accelsim scalesim`` on the same files.

SCALE-Sim runs in its own Python (``ACCELSIM_SCALESIM_PYTHON``, default
``/work/ssvenv/bin/python``; any Python with ``pip install scalesim==3.0.0``), through its
simulator classes with traces off. Both tools read the same ``.cfg`` and topology files; every
compute-report number, the SRAM access counts, the SRAM start/stop cycles and the SRAM
bandwidths must be the same strings in both CSVs. DRAM columns and ``Total Cycles (incl.
prefetch)`` come from accelsim's own memory model and are not compared
(``accelsim/report/SCALESIM.md``).

Run with ``pytest -m slow tests/reference/test_scalesim_parity.py`` (about half a minute).
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from accelsim.config.scalesim_cfg import write_cfg_variant
from accelsim.report.scalesim_reports import REPORT_FILES, run_scalesim

pytestmark = pytest.mark.slow

SCALESIM_PYTHON = os.environ.get("ACCELSIM_SCALESIM_PYTHON", "/work/ssvenv/bin/python")

GEMM = """\
Layer, M, N, K,
edge_33_on_32, 33, 33, 33,
g64x40x33, 64, 40, 33,
g100x33x70, 100, 33, 70,
single_row, 1, 5, 3,
wide, 9, 70, 17,
"""

CONV = """\
Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,
conv_33_filters, 12, 12, 3, 3, 4, 33, 1,
conv_stride2, 9, 9, 3, 3, 8, 16, 2,
dw_DP, 8, 8, 3, 3, 3, 1, 1,
partial_window, 10, 10, 3, 3, 2, 5, 2,
pointwise, 7, 7, 1, 1, 16, 24, 1,
"""

# SCALE-Sim's own API, traces off: config -> topology -> simulator.run() writes the reports.
DRIVER = textwrap.dedent("""\
    import json, sys
    from importlib.metadata import version
    if version("scalesim") != "3.0.0":
        print("SKIP scalesim " + version("scalesim")); sys.exit(0)
    from scalesim.scale_config import scale_config
    from scalesim.topology_utils import topologies
    from scalesim.layout_utils import layouts
    from scalesim.simulator import simulator
    for job in json.loads(sys.stdin.read()):
        cfg = scale_config(); cfg.read_conf_file(job["cfg"])
        topo = topologies(); topo.load_arrays(topofile=job["topology"], mnk_inputs=job["gemm"])
        sim = simulator()
        sim.set_params(config_obj=cfg, topo_obj=topo, layout_obj=layouts(),
                       top_path=job["out"], verbosity=False, save_trace=False)
        sim.run()
    print("OK")
""")

# (id, rows, cols, dataflow, interface mode, SRAM kB, bandwidth, bank bandwidth, topology)
JOBS = [(f"{df}_{r}x{c}_{t}", r, c, df, "CALC", 64, 10, 100, t)
        for (r, c) in ((32, 32), (8, 8), (16, 4)) for df in ("os", "ws", "is")
        for t in ("gemm", "conv")]
JOBS += [("user_nostall_ws_16x16_gemm", 16, 16, "ws", "USER", 256, 100, 100, "gemm"),
         ("user_nostall_os_8x8_conv", 8, 8, "os", "USER", 256, 100, 100, "conv")]
STALLED = [("user_stalls_is_8x8_gemm", 8, 8, "is", "USER", 1, 10, 10, "gemm"),
           ("user_stalls_os_16x16_conv", 16, 16, "os", "USER", 1, 10, 10, "conv")]


def _scalesim_available() -> str | None:
    if not Path(SCALESIM_PYTHON).exists():
        return f"no SCALE-Sim Python at {SCALESIM_PYTHON}"
    probe = subprocess.run([SCALESIM_PYTHON, "-c", "import scalesim.simulator"],
                           capture_output=True, text=True, timeout=120)
    if probe.returncode:
        return f"{SCALESIM_PYTHON} cannot import scalesim"
    return None


@pytest.fixture(scope="module")
def runs(tmp_path_factory, peer_missing):
    """Run every job through SCALE-Sim (one subprocess) and accelsim; job id -> (ours, theirs)."""
    why = _scalesim_available()
    if why:
        peer_missing(f"SCALE-Sim 3.0.0 not available ({why}); set ACCELSIM_SCALESIM_PYTHON to a "
                     "Python with `pip install scalesim==3.0.0`")
    root = tmp_path_factory.mktemp("scalesim_parity")
    topo = {"gemm": root / "gemm.csv", "conv": root / "conv.csv"}
    topo["gemm"].write_text(GEMM)
    topo["conv"].write_text(CONV)
    jobs, ours = [], {}
    for name, rows, cols, df, mode, kb, bw, bank_bw, t in JOBS + STALLED:
        cfg = root / f"{name}.cfg"
        write_cfg_variant(cfg, {
            "general": {"run_name": name},
            "architecture_presets": {"ArrayHeight": rows, "ArrayWidth": cols, "Dataflow": df,
                                     "IfmapSramSzkB": kb, "FilterSramSzkB": kb,
                                     "OfmapSramSzkB": kb, "Bandwidth": bw},
            "layout": {"IfmapSRAMBankBandwidth": bank_bw, "FilterSRAMBankBandwidth": bank_bw},
            "run_presets": {"InterfaceBandwidth": mode}})
        jobs.append({"cfg": str(cfg), "topology": str(topo[t]), "gemm": t == "gemm",
                     "out": str(root / "scalesim")})
        folder, _, _ = run_scalesim(cfg, topo[t], t, root / "accelsim")
        ours[name] = folder
    done = subprocess.run([SCALESIM_PYTHON, "-c", DRIVER], input=json.dumps(jobs),
                          capture_output=True, text=True, timeout=600, cwd=root)
    assert done.returncode == 0, done.stderr[-3000:]
    if done.stdout.startswith("SKIP"):
        peer_missing(f"parity is defined against scalesim 3.0.0, found {done.stdout.split()[-1]}")
    return {name: (ours[name], root / "scalesim" / name) for name in ours}


def _read(folder: Path, fname: str) -> tuple[str, list[list[str]]]:
    """(header line, rows split on SCALE-Sim's ', ' separator without the trailing comma)."""
    lines = (folder / fname).read_text().splitlines()
    assert all(line.endswith(",") for line in lines), f"{fname}: every line ends with a comma"
    return lines[0], [line[:-1].split(", ") for line in lines[1:]]


def _compare(ours: Path, theirs: Path, columns: dict[str, list[int]]) -> None:
    for fname in REPORT_FILES:
        h_ours, r_ours = _read(ours, fname)
        h_theirs, r_theirs = _read(theirs, fname)
        assert h_ours == h_theirs, f"{fname}: header"
        assert len(r_ours) == len(r_theirs), f"{fname}: one row per layer"
        for a, b in zip(r_ours, r_theirs):
            assert len(a) == len(b), f"{fname}: columns"
            for col in columns[fname]:
                assert a[col] == b[col], (f"{fname} layer {b[0]}, column "
                                          f"'{h_theirs.split(', ')[col]}': ours {a[col]} "
                                          f"SCALE-Sim {b[col]}")


STALL_FREE_COLUMNS = {
    "COMPUTE_REPORT.csv": [0, 2, 3, 4, 5, 6],           # all but Total Cycles (incl. prefetch)
    "BANDWIDTH_REPORT.csv": [0, 1, 2, 3],               # the SRAM bandwidths
    "DETAILED_ACCESS_REPORT.csv": list(range(10)),      # every SRAM column
}


@pytest.mark.parametrize("job", [j[0] for j in JOBS])
def test_stall_free_runs_match_scalesim_exactly(runs, job):
    """Same cfg, same topology, no stalls on either side: every compute number is equal."""
    ours, theirs = runs[job]
    _, rows = _read(theirs, "COMPUTE_REPORT.csv")
    assert all(r[3] == "0" for r in rows), "the case must be stall-free in SCALE-Sim"
    _compare(ours, theirs, STALL_FREE_COLUMNS)
    _, mine = _read(ours, "COMPUTE_REPORT.csv")
    assert all(int(r[1]) >= int(r[2]) for r in mine), "incl. prefetch covers the whole layer"


@pytest.mark.parametrize("job", [j[0] for j in STALLED])
def test_stalled_runs_match_scalesim_on_the_compute_side(runs, job):
    """With memory stalls the stall counts are each tool's own; the array work is the same."""
    ours, theirs = runs[job]
    _, r_theirs = _read(theirs, "COMPUTE_REPORT.csv")
    _, r_ours = _read(ours, "COMPUTE_REPORT.csv")
    assert sum(int(r[3]) for r in r_theirs) > 0, "the case must stall in SCALE-Sim"
    for a, b in zip(r_ours, r_theirs):
        assert int(a[2]) - int(a[3]) == int(b[2]) - int(b[3]), "compute cycles (total - stall)"
        assert a[5:7] == b[5:7], "mapping efficiency and compute utilisation"
    _compare(ours, theirs, {"COMPUTE_REPORT.csv": [0], "BANDWIDTH_REPORT.csv": [0],
                            "DETAILED_ACCESS_REPORT.csv": [0, 3, 6, 9]})
