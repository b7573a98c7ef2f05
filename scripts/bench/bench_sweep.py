"""Sweep speed: design points per second for single-layer systolic evaluations, and the wall
time of a 1,000-point ResNet-50 array-size x SRAM sweep on 2 cores.

    PYTHONPATH=. python scripts/bench/bench_sweep.py [--workers 2] [--single 4000] [--energy]

Rows of the table:

* ``single layer, batch``: the vectorised evaluator of many design points for one layer
  (``accelsim.engine.analytic.evaluate_layer_batch``), when the engine provides it.
* ``single layer, per point``: plan -> analytic schedule -> row for each point, one process
  (what one sweep worker does per point, without the sweep's bookkeeping).
* ``single layer, sweep``: the same points through ``run_sweep`` (keys, rows, Parquet, pool).
* ``single layer + energy``: the same points with energy metrics (``energy_j``, ``tops_per_w``,
  ``avg_power_w``, ``energy_dram_j``), one process, side by side: each point run and its
  actions summed on its own, the chunk priced at once (``priced_metrics``, the path before
  single-layer energy went through the batch evaluator), and the batch evaluator's figures
  made into action records and priced at once (``batch_metrics``), with their ratio and
  largest relative difference; then the whole sweep (``run_sweep``) with energy metrics.
* ``resnet50 sweep``: ``workloads/sweeps/resnet50_tpu_v4_array_sram.yaml`` (1,000 points)
  through ``run_sweep`` on ``--workers`` processes, wall time including the process pool's
  start and the Parquet file. ``--energy`` adds the same sweep with energy metrics twice, side
  by side: each point priced through pandas (``simulate(..., energy=True)``, the per-point
  path) and each chunk's actions priced in one numpy batch (the sweep's default), with their
  ratio.

* ``llama3_8b_decode sweep``: the same array x SRAM grid over Llama-3-8B decode
  (``workloads/sweeps/llama3_8b_decode_tpu_v4_array_sram.yaml``).

Targets (issue 15): >= 10,000 single-layer points/s for a whole sweep; the ResNet-50 sweep in
<= 10 s and the Llama-3-8B decode sweep in <= 60 s on 2 cores.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from accelsim.devices import device_for  # noqa: E402
from accelsim.sweep.evaluate import SweepContext  # noqa: E402
from accelsim.sweep.runner import run_sweep  # noqa: E402
from accelsim.sweep.space import load_spec, spec_from_dict  # noqa: E402
from accelsim.sweep.store import read_results  # noqa: E402

LAYER = {"op": "gemm", "name": "bert_ffn1", "m": 512, "n": 3072, "k": 768}
"""The single layer: BERT-base's first feed-forward GEMM at sequence length 512."""


def single_layer_spec(tmp: Path, samples: int) -> dict:
    wl = tmp / "one_layer.yaml"
    wl.write_text(yaml.safe_dump({"name": "one_layer", "ops": [LAYER]}))
    return {"name": "single_layer", "hardware": "tpu_v4", "workload": str(wl), "mode": "analytic",
            "sampling": {"method": "random", "samples": samples, "seed": 0},
            "parameters": {"compute.array.rows": {"low": 32, "high": 256},
                           "compute.array.cols": {"low": 32, "high": 256},
                           "memory.sram.capacity_bytes": {"low": "256 KiB", "high": "128 MiB",
                                                          "log": True},
                           "dataflow": ["os", "ws", "is"]},
            "metrics": ["total_cycles", "stall_cycles", "overall_util", "area_mm2"]}


def bench_batch(spec) -> tuple[int, float] | None:
    """The engine's batch evaluator over the spec's points, if it exists."""
    analytic = importlib.import_module("accelsim.engine.analytic")
    fn = getattr(analytic, "evaluate_layer_batch", None)
    if fn is None:
        return None
    import numpy as np

    from accelsim.config.registry import machine_from_dict

    points = spec.points()
    machine = machine_from_dict(spec.base_hw)
    op = next(iter(spec.workloads.values())).ops[0]
    arrays = {name: np.array([p[name] for p in points]) for name in spec.names}
    fn(machine, op, arrays)  # compile
    t = time.perf_counter()
    fn(machine, op, arrays)
    return len(points), time.perf_counter() - t


def bench_per_point(spec) -> tuple[int, float]:
    ctx = SweepContext.from_spec(spec)
    points = spec.points()
    op_wl = next(iter(spec.workloads.values()))
    device_for(ctx.machine(points[0])).workload_totals(op_wl, dataflow=points[0]["dataflow"],
                                                       mode="analytic")  # compile
    t = time.perf_counter()
    for p in points:
        device_for(ctx.machine(p)).workload_totals(op_wl, dataflow=p["dataflow"], mode="analytic")
    return len(points), time.perf_counter() - t


ENERGY_METRICS = ("energy_j", "tops_per_w", "avg_power_w", "energy_dram_j")
"""Energy metrics the energy rows add to a spec's metrics."""


def bench_energy_single(spec, n_before: int) -> tuple[tuple[int, float], tuple[int, float], float]:
    """``(before, after, largest relative difference)``: ``n_before`` points through the
    per-point actions priced per chunk, all points through the batch evaluator and pricing."""
    import numpy as np

    from accelsim.sweep.evaluate import SweepContext, batch_metrics, priced_metrics

    ctx = SweepContext.from_spec(spec)
    points = spec.points()
    few = points[:n_before]
    priced_metrics(ctx, few[:4])  # warm
    batch_metrics(ctx, few[:4])
    t = time.perf_counter()
    before = priced_metrics(ctx, few)
    t_before = time.perf_counter() - t
    t = time.perf_counter()
    after = batch_metrics(ctx, points)
    t_after = time.perf_counter() - t
    worst = 0.0
    for name in spec.metrics:
        a = np.array([m.get(name, np.nan) for m in before], np.float64)
        b = np.asarray(after[name], np.float64)[:len(few)]
        ok = ~np.isnan(a)
        worst = max(worst, float(np.max(np.abs(b[ok] - a[ok]) / np.abs(a[ok]), initial=0.0)))
    return (len(few), t_before), (len(points), t_after), worst


def bench_sweep(spec, out: Path, workers: int, evaluator=None) -> tuple[int, float]:
    t = time.perf_counter()
    summary = run_sweep(spec, out, workers=workers, force=True, progress=False,
                        evaluator=evaluator)
    wall = time.perf_counter() - t
    print(f"  {spec.name}: ran on {summary.workers}", file=sys.stderr)
    return summary.evaluated, wall


def pandas_energy_point(ctx, point) -> dict[str, float]:
    """The per-point reference: ``simulate(..., energy=True)`` (actions table priced through
    pandas), its totals and energy metrics, and the area model."""
    from accelsim.api import simulate
    from accelsim.sweep.area import area_breakdown
    from accelsim.sweep.evaluate import energy_metrics

    machine = ctx.machine(point)
    result = simulate(machine, ctx.workload(point), dataflow=point.get("dataflow"),
                      mode=ctx.mode, energy=True)
    out = {k: float(v) for k, v in result.totals.items()
           if isinstance(v, (int, float)) and not isinstance(v, bool)}
    return {**out, **energy_metrics(result.energy), **area_breakdown(machine)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2, help="processes for the sweeps (default 2)")
    ap.add_argument("--single", type=int, nargs="+", default=[4000, 20000],
                    help="single-layer design points (one sweep per count)")
    ap.add_argument("--energy", action="store_true",
                    help="also time the ResNet-50 sweep with energy")
    ap.add_argument("--skip-resnet", action="store_true", help="single-layer rows only")
    args = ap.parse_args(argv)
    rows: list[tuple[str, str, str, str, str]] = []

    def add(name: str, result: tuple[int, float] | None, target: str) -> None:
        if result is None:
            rows.append((name, "-", "-", "n/a", target))
            return
        n, wall = result
        rows.append((name, f"{n:,}", f"{wall:.2f}", f"{n / wall:,.0f}", target))
        print(f"  {name}: {n} points in {wall:.2f} s", file=sys.stderr)

    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for n in args.single:
            spec = spec_from_dict(single_layer_spec(tmp, n), file="<bench>")
            if n == args.single[0]:
                add("single layer, batch (engine)", bench_batch(spec), ">= 10,000 pt/s")
                add("single layer, per point, 1 process", bench_per_point(spec), ">= 10,000 pt/s")
            add(f"single layer, sweep, {args.workers} workers",
                bench_sweep(spec, tmp / f"single{n}.parquet", args.workers), ">= 10,000 pt/s")
            if n == args.single[0]:
                espec = dataclasses.replace(spec, metrics=spec.metrics + ENERGY_METRICS)
                before, after, worst = bench_energy_single(espec, min(n, 2000))
                print(f"  single layer + energy: largest relative difference {worst:.1e}",
                      file=sys.stderr)
                add("single layer + energy, per-point actions (before), 1 process", before,
                    "(before)")
                add("single layer + energy, batch evaluator + pricing, 1 process", after,
                    f"{(after[0] / after[1]) / (before[0] / before[1]):.1f}x faster")
                add(f"single layer + energy, sweep, {args.workers} workers",
                    bench_sweep(espec, tmp / f"single_e{n}.parquet", args.workers), "")
        if not args.skip_resnet:
            rspec = load_spec(ROOT / "workloads/sweeps/resnet50_tpu_v4_array_sram.yaml")
            add(f"resnet50 sweep, {args.workers} workers",
                bench_sweep(rspec, tmp / "resnet.parquet", args.workers), "1,000 pt <= 10 s")
            lspec = load_spec(ROOT / "workloads/sweeps/llama3_8b_decode_tpu_v4_array_sram.yaml")
            add(f"llama3_8b_decode sweep, {args.workers} workers",
                bench_sweep(lspec, tmp / "llama.parquet", args.workers), "1,000 pt <= 60 s")
            if args.energy:
                espec = dataclasses.replace(rspec, metrics=rspec.metrics + ENERGY_METRICS)
                before = bench_sweep(espec, tmp / "resnet_p.parquet", args.workers,
                                     pandas_energy_point)
                after = bench_sweep(espec, tmp / "resnet_e.parquet", args.workers)
                add(f"resnet50 sweep + energy, pandas per point, {args.workers} workers", before,
                    "(before)")
                add(f"resnet50 sweep + energy, batch pricing, {args.workers} workers", after,
                    f"{before[1] / after[1]:.1f}x faster")
                a = read_results(tmp / "resnet_p.parquet")
                b = read_results(tmp / "resnet_e.parquet")
                worst = max(float(((b[m] - a[m]).abs() / a[m].abs()).max())
                            for m in espec.metrics)
                print(f"  energy sweeps: largest relative difference {worst:.1e}", file=sys.stderr)
    head = ("benchmark", "points", "wall s", "points/s", "target")
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(5)]
    for r in [head, tuple("-" * w for w in widths)] + rows:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(r, widths))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
