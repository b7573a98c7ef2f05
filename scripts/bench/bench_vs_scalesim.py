"""Benchmark: the same layers through SCALE-Sim 3.0 and through accelsim, in one run.

    python scripts/bench/bench_vs_scalesim.py [--scalesim-python PY] [--timeout 600] [--repeat 5]

Cases: a 1024x1024x1024 GEMM on a 256x256 array (os, SCALE-Sim's default dataflow) and
ResNet-18 (``workloads/scalesim/resnet18.csv``) on SCALE-Sim's default 32x32 array in os, ws
and is; SCALE-Sim's own ``scale.cfg`` otherwise (CALC bandwidth mode, 64 kB SRAMs).

* SCALE-Sim runs in its own Python (``--scalesim-python`` or ``ACCELSIM_SCALESIM_PYTHON``)
  through its Python API with traces off; the time is measured inside that process around
  reading the cfg and topology, simulating and writing the reports. A case that runs past
  ``--timeout`` seconds is killed and reported as ``>N s``.
* accelsim runs the same cfg and topology through ``accelsim scalesim``'s code path
  (``run_scalesim``: read, map, replay, write the three CSVs), timed in this process: one
  warm-up, then the median of ``--repeat`` runs; once on the SimPy event engine (the
  default) and once on the numba fast path (``--mode analytic``, identical schedules), with
  the speed-up over SCALE-Sim for each.
* "cycles agree" compares every layer's compute cycles (Total Cycles - Stall Cycles) in the
  two COMPUTE_REPORT.csv files, and Total Cycles too where SCALE-Sim reports no stalls. When
  the full SCALE-Sim run timed out, SCALE-Sim's compute classes are run alone (no memory
  simulation) and every layer's cycles, mapping efficiency and compute utilisation are
  compared with ours instead (said so in the table).

It also times ResNet-50 on ``tpu_v4`` through ``accelsim.api.simulate(mode="event")``
(target: <= 0.5 s).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from accelsim.api import simulate  # noqa: E402
from accelsim.config.scalesim_cfg import write_cfg_variant  # noqa: E402
from accelsim.report.scalesim_reports import run_scalesim  # noqa: E402

# Runs inside SCALE-Sim's Python: its API, traces off, timed in-process.
DRIVER = textwrap.dedent("""\
    import json, sys, time
    cfg_path, topo_path, gemm, out = sys.argv[1], sys.argv[2], sys.argv[3] == "gemm", sys.argv[4]
    t0 = time.perf_counter()
    from scalesim.scale_config import scale_config
    from scalesim.topology_utils import topologies
    from scalesim.layout_utils import layouts
    from scalesim.simulator import simulator
    t1, c1 = time.perf_counter(), time.process_time()
    cfg = scale_config(); cfg.read_conf_file(cfg_path)
    topo = topologies(); topo.load_arrays(topofile=topo_path, mnk_inputs=gemm)
    sim = simulator()
    sim.set_params(config_obj=cfg, topo_obj=topo, layout_obj=layouts(), top_path=out,
                   verbosity=False, save_trace=False)
    sim.run()
    t2, c2 = time.perf_counter(), time.process_time()
    print(json.dumps({"seconds": t2 - t1, "cpu_seconds": c2 - c1, "import_seconds": t1 - t0}))
""")

# When the full run times out: SCALE-Sim's own compute classes alone (no memory simulation)
# give each layer's stall-free cycles (demand rows - 1), mapping efficiency and compute util.
COMPUTE_ONLY = textwrap.dedent("""\
    import json, sys
    from scalesim.scale_config import scale_config
    from scalesim.topology_utils import topologies
    from scalesim.layout_utils import layouts
    from scalesim.single_layer_sim import single_layer_sim
    cfg = scale_config(); cfg.read_conf_file(sys.argv[1])
    topo = topologies(); topo.load_arrays(topofile=sys.argv[2], mnk_inputs=sys.argv[3] == "gemm")
    out = []
    for i in range(topo.get_num_layers()):
        s = single_layer_sim()
        s.set_params(layer_id=i, config_obj=cfg, topology_obj=topo, layout_obj=layouts(),
                     verbose=False)
        m = s.op_mat_obj
        kw = {}
        if s.dataflow == "ws":
            kw = dict(sparsity_ratio_N=s.sparsity_ratio_N, sparsity_ratio_M=s.sparsity_ratio_M,
                      ifmap_op_mat_original=m.ifmap_addr_matrix_original,
                      sparsity_filter_array=m.sparse_filter_array)
        s.compute_system.set_params(config_obj=cfg, ifmap_op_mat=m.get_ifmap_matrix()[1],
                                    filter_op_mat=m.get_filter_matrix()[1],
                                    ofmap_op_mat=m.get_ofmap_matrix()[1], **kw)
        demand = s.compute_system.get_demand_matrices()
        out.append([int(demand[2].shape[0] - 1),
                    repr(s.compute_system.get_avg_mapping_efficiency() * 100),
                    repr(s.compute_system.get_avg_compute_utilization() * 100)])
    print(json.dumps(out))
""")

CASES = [
    # name, rows, cols, dataflow, topology (relative to the repo or written here), input type
    ("gemm1024 256x256 os", 256, 256, "os", "gemm1024.csv", "gemm"),
    ("resnet18 32x32 os", 32, 32, "os", "workloads/scalesim/resnet18.csv", "conv"),
    ("resnet18 32x32 ws", 32, 32, "ws", "workloads/scalesim/resnet18.csv", "conv"),
    ("resnet18 32x32 is", 32, 32, "is", "workloads/scalesim/resnet18.csv", "conv"),
]


def compute_rows(folder: Path) -> list[tuple[int, int]]:
    """(Total Cycles, Stall Cycles) per layer from a COMPUTE_REPORT.csv."""
    rows = []
    for line in (folder / "COMPUTE_REPORT.csv").read_text().splitlines()[1:]:
        cells = line.rstrip(",").split(", ")
        rows.append((int(cells[2]), int(cells[3])))
    return rows


def cycles_agree(ours: list[tuple[int, int]], theirs: list[tuple[int, int]]) -> str:
    """'yes (N layers)' when every layer's compute cycles (and stall-free totals) agree."""
    if len(ours) != len(theirs):
        return f"no ({len(ours)} vs {len(theirs)} layers)"
    bad = sum(1 for (ta, sa), (tb, sb) in zip(ours, theirs)
              if ta - sa != tb - sb or (sb == 0 and ta != tb))
    return f"yes ({len(ours)} layers)" if bad == 0 else f"no ({bad} layers differ)"


def compute_model_agree(python: str, cfg: Path, topo: Path, kind: str, ours: Path,
                        timeout: float) -> str:
    """Compare our compute columns with SCALE-Sim's compute classes run alone."""
    try:
        done = subprocess.run([python, "-c", COMPUTE_ONLY, str(cfg), str(topo), kind],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "n/a (timed out)"
    if done.returncode:
        return "n/a (SCALE-Sim failed)"
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    rows = [line.rstrip(",").split(", ")
            for line in (ours / "COMPUTE_REPORT.csv").read_text().splitlines()[1:]]
    # cycles exactly; utilisations to 1e-9 (Python >= 3.12's sum() compensates rounding)
    bad = sum(1 for r, (cyc, me, cu) in zip(rows, theirs)
              if int(r[2]) - int(r[3]) != cyc
              or not math.isclose(float(r[5]), float(me), rel_tol=1e-9)
              or not math.isclose(float(r[6]), float(cu), rel_tol=1e-9))
    if len(rows) != len(theirs) or bad:
        return f"no ({bad} layers differ, SCALE-Sim compute model)"
    return f"yes ({len(rows)} layers, vs SCALE-Sim's compute model; full run timed out)"


def time_scalesim(python: str, cfg: Path, topo: Path, kind: str, out: Path,
                  timeout: float) -> tuple[float | None, float | None, str]:
    """SCALE-Sim's in-process wall and CPU seconds (None past ``timeout``) and a note."""
    try:
        done = subprocess.run([python, "-c", DRIVER, str(cfg), str(topo), kind, str(out)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, None, "timed out"
    if done.returncode:
        return None, None, "failed: " + done.stderr.strip().splitlines()[-1][:120]
    doc = json.loads(done.stdout.strip().splitlines()[-1])
    return doc["seconds"], doc["cpu_seconds"], ""


def time_accelsim(cfg: Path, topo: Path, kind: str, out: Path, repeat: int,
                  mode: str) -> float:
    """Median seconds of ``run_scalesim`` (after one warm-up run)."""
    run_scalesim(cfg, topo, kind, out, mode)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run_scalesim(cfg, topo, kind, out, mode)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scalesim-python",
                    default=os.environ.get("ACCELSIM_SCALESIM_PYTHON", "/work/ssvenv/bin/python"),
                    help="a Python with scalesim==3.0.0 installed")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per SCALE-Sim case")
    ap.add_argument("--check-timeout", type=float, default=300,
                    help="seconds for SCALE-Sim's compute-only check of a timed-out case")
    ap.add_argument("--repeat", type=int, default=5, help="timed accelsim runs per case")
    ap.add_argument("--cases", default="all",
                    help="comma-separated substrings of case names (default all)")
    args = ap.parse_args()
    if not (Path(args.scalesim_python).exists() or shutil.which(args.scalesim_python)):
        print(f"no SCALE-Sim Python at {args.scalesim_python} (--scalesim-python)", file=sys.stderr)
        return 2
    wanted = [c for c in CASES if args.cases == "all"
              or any(s in c[0] for s in args.cases.split(","))]
    header = (f"{'case':<20} {'layers':>6} {'SCALE-Sim s':>11} {'(cpu s)':>8} "
              f"{'event s':>8} {'analytic s':>10} {'x (event)':>10} {'x (analytic)':>12}  "
              "compute cycles agree")
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "gemm1024.csv").write_text("Layer, M, N, K,\ngemm1024, 1024, 1024, 1024,\n")
        for name, rows, cols, df, topo_rel, kind in wanted:
            slug = name.replace(" ", "_")
            cfg = work / f"{slug}.cfg"
            write_cfg_variant(cfg, {"general": {"run_name": slug},
                                    "architecture_presets": {"ArrayHeight": rows,
                                                             "ArrayWidth": cols, "Dataflow": df}})
            topo = work / topo_rel if (work / topo_rel).exists() else ROOT / topo_rel
            t_ss, c_ss, note = time_scalesim(args.scalesim_python, cfg, topo, kind, work / "ss",
                                       args.timeout)
            t_ev = time_accelsim(cfg, topo, kind, work / "acc", args.repeat, "event")
            t_an = time_accelsim(cfg, topo, kind, work / "acc", args.repeat, "analytic")
            ours = compute_rows(work / "acc" / slug)
            if t_ss is None:
                ss_txt = f">{args.timeout:.0f}" if note == "timed out" else "failed"
                cpu_txt = "-"
                ratio = (f">{args.timeout / t_ev:,.0f}", f">{args.timeout / t_an:,.0f}")
                if note != "timed out":
                    ratio = ("-", "-")
                agree = (compute_model_agree(args.scalesim_python, cfg, topo, kind,
                                             work / "acc" / slug, args.check_timeout)
                         if note == "timed out" else f"n/a ({note})")
            else:
                ss_txt, cpu_txt = f"{t_ss:.2f}", f"{c_ss:.2f}"
                ratio = (f"{t_ss / t_ev:,.0f}", f"{t_ss / t_an:,.0f}")
                agree = cycles_agree(ours, compute_rows(work / "ss" / slug))
            print(f"{name:<20} {len(ours):>6} {ss_txt:>11} {cpu_txt:>8} {t_ev:>8.4f} "
                  f"{t_an:>10.4f} {ratio[0]:>10} {ratio[1]:>12}  {agree}", flush=True)
    simulate("tpu_v4", "resnet50_convs", mode="event")            # warm-up
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        r = simulate("tpu_v4", "resnet50_convs", mode="event")
        times.append(time.perf_counter() - t0)
    t = statistics.median(times)
    print(f"\nresnet50 on tpu_v4, event engine: {t:.3f} s median of {args.repeat} "
          f"({len(r.layers)} layers, {r.totals['total_cycles']:,} cycles; target <= 0.5 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
