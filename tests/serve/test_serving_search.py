"""Finding a serving configuration: the cheapest one meeting an SLO, locally and on Dask."""

from __future__ import annotations

import pytest

from accelsim.cli import main
from accelsim.errors import ConfigError
from accelsim.sweep.serving import Load, configurations, search

MODEL = "gpt2_small"
LOAD = Load(isl=200, osl=20, requests=40, rate=200)


# The scheduler's HTTP server (dashboard off) on a free port: two xdist workers both
# binding 8787 make one warn, an error in this suite.
FREE_HTTP_PORT = {"dashboard": False, "dashboard_address": "127.0.0.1:0"}


def test_configurations_fit_the_node_and_shard_the_model():
    points = configurations(MODEL, ["h200"], tp=(1, 2, 5), replicas=(1, 4, 8))
    layouts = {(p["tp"], p["replicas"]) for p in points}
    assert (2, 4) in layouts and (1, 8) in layouts
    assert (2, 8) not in layouts            # 16 GPUs: more than the HGX H200 has
    assert all(p["tp"] != 5 for p in points)  # 5 does not divide GPT-2's 12 heads
    grid = configurations(MODEL, ["h200"], engine_grid={"max_num_seqs": [8, 64]})
    assert [p["settings"] for p in grid] == [{"max_num_seqs": 8}, {"max_num_seqs": 64}]


def test_the_cheapest_configuration_meeting_the_slo_is_chosen():
    points = configurations(MODEL, ["h200", "h100"], tp=(1, 2), replicas=(1, 2))
    res = search(MODEL, points, load=LOAD, slo={"ttft": 10.0}, prices={"h200": 3, "h100": 2})
    rows = res.rows
    assert len(rows) == len(points) and rows["meets_slo"].all()  # a loose SLO: all meet it
    assert res.best["gpu"] == "h100" and res.best["gpus"] == 1   # 1 GPU at the lower price
    assert res.best["cost_per_hour"] == rows["cost_per_hour"].min()
    assert len(res.front) >= 1 and res.figure() is not None


def test_an_slo_nobody_meets_names_the_closest():
    points = configurations(MODEL, ["h200"], tp=(1,), replicas=(1,))
    res = search(MODEL, points, load=LOAD, slo={"ttft": 1e-7})
    assert res.best is None and res.closest is not None
    with pytest.raises(ConfigError, match="needs SLO bounds"):
        search(MODEL, points, load=LOAD, slo={})


def test_local_workers_give_the_same_rows():
    points = configurations(MODEL, ["h200"], tp=(1, 2), replicas=(1,))
    one = search(MODEL, points, load=LOAD, slo={"ttft": 1.0}).rows
    two = search(MODEL, points, load=LOAD, slo={"ttft": 1.0}, workers=2).rows
    assert one.drop(columns="settings").equals(two.drop(columns="settings"))


def test_a_real_dask_cluster_gives_the_same_rows():
    distributed = pytest.importorskip("distributed")
    points = configurations(MODEL, ["h200"], tp=(1, 2), replicas=(1,))
    local = search(MODEL, points, load=LOAD, slo={"ttft": 1.0}).rows
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None,
                                  scheduler_kwargs=FREE_HTTP_PORT) as cluster:
        remote = search(MODEL, points, load=LOAD, slo={"ttft": 1.0},
                        scheduler=cluster.scheduler_address).rows
    assert local.equals(remote)


def test_the_command_line_search(capsys, tmp_path):
    rc = main(["serve-search", MODEL, "--gpus", "h200", "--tp", "1,2", "--replicas", "1",
               "--isl", "200", "--osl", "20", "--requests", "30", "--rate", "100",
               "--slo", "ttft=10s", "--out", str(tmp_path / "rows.csv")])
    out = capsys.readouterr().out
    assert rc == 0 and "cheapest meeting the SLO:\n  h200 tp=1" in out
    assert (tmp_path / "rows.csv").read_text().count("\n") == 3
    assert main(["serve-search", MODEL, "--tp", "x", "--slo", "ttft=1s"]) == 2
    assert main(["serve-search", MODEL, "--tp", "1", "--replicas", "1", "--isl", "200",
                 "--osl", "20", "--requests", "10", "--slo", "ttft=1ns"]) == 1
