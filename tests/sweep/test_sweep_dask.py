"""Dask sweeps on a real ``dask.distributed.LocalCluster`` (2 worker processes, not a mock)."""

from __future__ import annotations

import os
import signal

import pytest
from sweep_stubs import grid_spec, slow_eval

from accelsim.sweep.evaluate import SweepContext
from accelsim.sweep.runner import run_sweep
from accelsim.sweep.space import load_spec
from accelsim.sweep.store import read_results

distributed = pytest.importorskip("distributed")


# The scheduler's HTTP server (dashboard off) on a free port: two xdist workers both
# binding 8787 make one warn, an error in this suite.
FREE_HTTP_PORT = {"dashboard": False, "dashboard_address": "127.0.0.1:0"}


@pytest.fixture(scope="module")
def cluster():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    old = os.environ.get("PYTHONPATH")
    # workers import accelsim and the stub evaluators by name
    os.environ["PYTHONPATH"] = os.pathsep.join([root, here] + ([old] if old else []))
    try:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None,
                                      scheduler_kwargs=FREE_HTTP_PORT, silence_logs=50) as lc:
            yield lc
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


def test_dask_run_gives_the_same_rows_as_a_local_run(cluster, write_spec, tmp_path):
    """The real simulator on the cluster, through the scheduler's address, as the CLI does."""
    spec = load_spec(write_spec(grid_spec(metrics=["total_cycles", "overall_util", "area_mm2"])))
    local = tmp_path / "local.parquet"
    remote = tmp_path / "dask.parquet"
    run_sweep(spec, local, workers=2, progress=False)
    summary = run_sweep(spec, remote, scheduler=cluster.scheduler_address, progress=False)
    assert summary.evaluated == 24
    a, b = read_results(local), read_results(remote)
    assert len(a) == 24
    assert a.equals(b)


def test_killing_a_worker_mid_sweep_loses_and_duplicates_no_point(cluster, write_spec, tmp_path):
    spec = load_spec(write_spec(grid_spec(parameters={
        "compute.array.rows": [8, 16, 32, 64, 128], "compute.array.cols": [8, 16, 32, 64, 128],
        "memory.sram.capacity_bytes": ["1 MiB", "2 MiB", "4 MiB", "8 MiB"],
        "dataflow": ["os", "ws", "is"]}, constraints=None)))
    n = 5 * 5 * 4 * 3
    out = tmp_path / "r.parquet"
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
        pids = list(client.run(os.getpid).values())
        assert len(pids) == 2
        received: list[dict] = []
        killed: list[int] = []

        def kill_one_worker(rows):
            received.extend(rows)
            if not killed and len(received) > 20:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])

        summary = run_sweep(spec, out, scheduler=client, evaluator=slow_eval, progress=False,
                            on_rows=kill_one_worker)
        assert killed, "the sweep ended before a worker could be killed"
    df = read_results(out)
    ctx = SweepContext.from_spec(spec, slow_eval)
    expected = {ctx.point_id(p) for p in spec.points()}
    assert len(df) == n and df["point_id"].is_unique and set(df["point_id"]) == expected
    assert summary.evaluated == n  # a chunk that ran twice is counted and written once
