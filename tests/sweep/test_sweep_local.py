"""Local sweeps: every point once, on a process pool; resume; error rows; the real simulator."""

from __future__ import annotations

import math

import pytest
from sweep_stubs import cold_start_eval, fast_eval, grid_spec, picky_eval, slow_eval

from accelsim.errors import ConfigError
from accelsim.sweep.evaluate import SweepContext
from accelsim.sweep.runner import run_sweep
from accelsim.sweep.space import load_spec
from accelsim.sweep.store import read_results


def test_every_point_becomes_one_row_with_parameters_metrics_and_key(write_spec, tmp_path):
    spec = load_spec(write_spec(grid_spec()))
    out = tmp_path / "r.parquet"
    summary = run_sweep(spec, out, workers=2, evaluator=fast_eval, progress=False)
    df = read_results(out)
    assert summary.evaluated == len(df) == 24 and summary.skipped == 0
    assert df["point_id"].is_unique
    assert set(spec.names) | {"cycles", "area", "point_id", "error"} <= set(df.columns)
    for row in df.itertuples(index=False):
        point = dict(zip(spec.names, row[:4]))
        assert row.cycles == pytest.approx(fast_eval(None, point)["cycles"])
    # rows are in the spec's point order
    ctx = SweepContext.from_spec(spec, fast_eval)
    assert list(df["point_id"]) == [ctx.point_id(p) for p in spec.points()]


def test_a_slow_first_call_does_not_send_fast_points_to_a_pool(write_spec, tmp_path):
    # the first point pays 30 ms (numba kernels loading); 23 more warm points take microseconds,
    # far less than starting a pool: the sweep must time warm points and stay in-process
    import accelsim.engine.analytic  # noqa: F401  (imported once, like any warm process)

    spec = load_spec(write_spec(grid_spec()))
    cold_start_eval.reset()
    summary = run_sweep(spec, tmp_path / "r.parquet", workers=2, evaluator=cold_start_eval,
                        progress=False)
    assert summary.evaluated == 24
    assert summary.workers == "1 process(es)"


def test_point_keys_are_stable_and_depend_on_what_defines_the_point(write_spec):
    spec = load_spec(write_spec(grid_spec()))
    p = spec.points()[0]
    a = SweepContext.from_spec(spec, fast_eval)
    b = SweepContext.from_spec(load_spec(write_spec(grid_spec())), fast_eval)
    assert a.point_id(p) == b.point_id(dict(reversed(list(p.items()))))
    assert a.point_id(p) != a.point_id({**p, "dataflow": "is"})
    other = load_spec(write_spec(grid_spec(hardware="tpu_v1")))
    assert SweepContext.from_spec(other, fast_eval).point_id(p) != a.point_id(p)


def test_resume_evaluates_only_the_missing_points(write_spec, tmp_path):
    spec = load_spec(write_spec(grid_spec()))
    out = tmp_path / "r.csv"
    seen = []

    def stop_early(rows):
        seen.extend(rows)
        if len(seen) >= 6:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(spec, out, workers=2, evaluator=slow_eval, progress=False, on_rows=stop_early)
    partial = read_results(out)
    assert 6 <= len(partial) < 24 and partial["point_id"].is_unique
    summary = run_sweep(spec, out, workers=2, evaluator=slow_eval, resume=True, progress=False)
    assert summary.skipped == len(partial)
    assert summary.evaluated == 24 - len(partial)
    df = read_results(out)
    assert len(df) == 24 and df["point_id"].is_unique
    again = run_sweep(spec, out, workers=2, evaluator=slow_eval, resume=True, progress=False)
    assert again.evaluated == 0 and again.skipped == 24


def test_unsupported_points_become_error_rows_and_count_as_done(write_spec, tmp_path):
    spec = load_spec(write_spec(grid_spec(parameters={
        "compute.array.rows": [32, 16], "dataflow": ["os", "ws"]}, constraints=None)))
    out = tmp_path / "r.parquet"
    summary = run_sweep(spec, out, workers=1, evaluator=picky_eval, progress=False)
    df = read_results(out)
    bad = df[df["compute.array.rows"] == 16]
    assert summary.errors == 2 and len(bad) == 2
    assert bad["error"].str.contains("not supported").all() and bad["cycles"].isna().all()
    assert (df[df["compute.array.rows"] == 32]["error"] == "").all()
    assert run_sweep(spec, out, evaluator=picky_eval, resume=True, progress=False).evaluated == 0


def test_an_unknown_metric_fails_before_any_file_is_written(write_spec, tmp_path):
    spec = load_spec(write_spec(grid_spec(metrics=["cycles", "joules"])))
    out = tmp_path / "r.parquet"
    with pytest.raises(ConfigError,
                       match=r"metrics = 'joules': unknown metric \(known: area, cycles\)"):
        run_sweep(spec, out, evaluator=fast_eval, progress=False)
    assert not out.exists()


def test_real_simulator_rows_equal_direct_simulation(write_spec, tmp_path):
    """The default evaluator: accelsim.api.simulate plus the area model, per point."""
    from accelsim.api import simulate
    from accelsim.sweep.area import area_breakdown

    spec = load_spec(write_spec(grid_spec(
        parameters={"compute.array.rows": [16, 64], "compute.array.cols": [16, 64],
                    "dataflow": ["os", "ws"]},
        metrics=["total_cycles", "overall_util", "energy_j", "area_mm2"])))
    out = tmp_path / "r.parquet"
    run_sweep(spec, out, workers=2, progress=False)
    df = read_results(out)
    assert len(df) == 4 and (df["error"] == "").all()
    row = df.iloc[-1]
    hw = {"compute.array.rows": int(row["compute.array.rows"]),
          "compute.array.cols": int(row["compute.array.cols"])}
    direct = simulate("tpu_v4", spec.workloads[spec.default_workload], dataflow=row["dataflow"],
                      mode="analytic", overrides=hw)
    assert row["total_cycles"] == direct.totals["total_cycles"]
    assert row["energy_j"] == pytest.approx(direct.energy.to_dict()["total_j"])
    assert row["area_mm2"] == pytest.approx(area_breakdown(direct.machine)["area_mm2"])
    assert math.isfinite(row["overall_util"]) and 0 < row["overall_util"] <= 1


def test_fast_machine_and_totals_equal_the_reference_path(write_spec):
    """The sweep builds machines by replacing fields of the base machine and skips the action
    table (the systolic device's workload_totals); both shortcuts must give what building from
    YAML and simulate() give."""
    from accelsim.api import simulate
    from accelsim.devices import device_for

    spec = load_spec(write_spec(grid_spec(
        constraints=None,
        parameters={"compute.array.rows": [8, 128], "compute.array.cols": [24, 256],
                    "memory.sram.capacity_bytes": ["256 KiB", "64 MiB"],
                    "memory.dram.bandwidth_bytes_per_s": ["20 GB/s", "1.2 TB/s"],
                    "dataflow": ["os", "ws", "is"]})))
    ctx = SweepContext.from_spec(spec)
    wl = spec.workloads[spec.default_workload]
    for point in spec.points()[::3]:
        fast = ctx.machine(point)
        assert fast == ctx.machine_from_yaml(point)
        for mode in ("analytic", "event"):
            ref = simulate(fast, wl, dataflow=point["dataflow"], mode=mode, energy=False).totals
            got = device_for(fast).workload_totals(wl, dataflow=point["dataflow"], mode=mode)
            assert got == ref


def test_fields_checked_together_are_replaced_together(write_spec):
    """Overrides go into the base machine together, as the YAML path applies them: SRAM
    fractions that must add up to 1 are replaced jointly (one at a time, the first would
    break the sum); a bad combination is still a one-line error naming a field."""
    spec = load_spec(write_spec(grid_spec(constraints=None,
                                          parameters={"compute.array.rows": [16, 32]})))
    ctx = SweepContext.from_spec(spec)
    point = {"memory.sram.ifmap_fraction": 0.25, "memory.sram.filter_fraction": 0.5,
             "compute.array.rows": 16}
    fast = ctx.machine(point)
    assert fast == ctx.machine_from_yaml(point)
    assert fast.memory.sram.ifmap_fraction == 0.25 and fast.array.rows == 16
    with pytest.raises(ConfigError, match="fractions add up to 1.25"):
        ctx.machine({**point, "memory.sram.ifmap_fraction": 0.5})
