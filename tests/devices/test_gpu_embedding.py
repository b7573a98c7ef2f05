"""An embedding lookup on a GPU, one op at a time (accelsim op, compare, roofline) as whole models
run it: the row gather the libraries launch (workload.device_ops.device_op); a GPU sweep of a
workload holding one."""

from __future__ import annotations

import pytest
import yaml

from accelsim.api import load_hw
from accelsim.devices import device_for
from accelsim.workload.nn_ops import Elementwise, Embedding

EMB = Embedding(name="wte", tokens=512, dim=768, table_rows=50257)


@pytest.mark.parametrize("hw", ["a100", "h200"])
def test_embedding_costs_the_gather_it_runs_as(hw):
    dev = device_for(load_hw(hw))
    cost = dev.cost(EMB)
    gather = dev.cost(Elementwise(name="wte", rows=512, cols=768, fn="copy", dtype=EMB.dtype))
    assert cost.op == "embedding" and cost.detail["op"] == "embedding"
    assert cost.time_s == gather.time_s > 0
    assert cost.level_bytes == gather.level_bytes
    # the gather reads the looked-up rows and writes them: 2 x tokens x dim elements
    assert cost.detail["bytes"] == pytest.approx(2 * 512 * 768 * 2)
    assert dev.energy_j(cost) > 0
    assert [k.name for k in dev.plan(EMB).kernels] == [k.name for k in dev.plan(
        Elementwise(name="wte", rows=512, cols=768, fn="copy", dtype=EMB.dtype)).kernels]


def test_accelsim_op_runs_an_embedding_on_a_gpu(capsys):
    from accelsim.cli import main

    assert main(["op", "h200", "embedding", "--tokens", "512", "--dim", "768",
                 "--table-rows", "50257"]) == 0
    assert "h200 embedding" in capsys.readouterr().out


def test_gpu_sweep_of_a_workload_with_an_embedding(tmp_path):
    from accelsim.sweep.runner import run_sweep
    from accelsim.sweep.space import spec_from_dict
    from accelsim.sweep.store import read_results

    wl = tmp_path / "emb.yaml"
    wl.write_text(yaml.safe_dump({"name": "emb", "ops": [
        {"op": "embedding", "name": "wte", "tokens": 512, "dim": 768, "table_rows": 50257},
        {"op": "gemm", "name": "ffn", "m": 512, "n": 3072, "k": 768}]}))
    spec = spec_from_dict({"name": "g", "hardware": "h200", "workload": str(wl),
                           "parameters": {"compute.sm_count": [33, 132]},
                           "metrics": ["time_s", "gpu_busy_s", "energy_j"]}, file="<test>")
    run_sweep(spec, tmp_path / "o.parquet", workers=1, progress=False)
    df = read_results(tmp_path / "o.parquet")
    assert (df["error"] == "").all() and len(df) == 2
    for _, row in df.iterrows():
        ref = device_for(load_hw("h200", {"compute.sm_count": row["compute.sm_count"]})
                         ).run_model(spec.workloads[spec.default_workload]).totals
        for name in ("time_s", "gpu_busy_s", "energy_j"):
            assert row[name] == pytest.approx(ref[name], rel=1e-12), name
