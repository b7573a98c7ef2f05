"""Models across GPUs: Megatron sharding, the collectives each rank calls, pipeline stages."""

from __future__ import annotations

import pytest

from accelsim.config.registry import load_machine
from accelsim.devices.gpu_model import run_gpu_model
from accelsim.devices.parallel import node_for, rank_graphs, run_parallel
from accelsim.engine.collectives import run_collective
from accelsim.errors import AccelsimError
from accelsim.workload.models.transformer import LLAMA3_8B, LLAMA3_70B, build_transformer
from accelsim.workload.parallel import Collective, pipeline_stages, shard_spec

SPEC = "llama3_8b_decode:batch=8,context=1024"


def test_tp1_on_one_gpu_is_the_single_gpu_run():
    h200 = load_machine("h200")
    for mode in ("eager", "graph"):
        alone = run_gpu_model(h200, SPEC, exec_mode=mode)
        par = run_parallel("h200", SPEC, tp=1, pp=1, exec_mode=mode)
        assert par.step_s == alone.step_s
        assert par.totals["energy_j"] == alone.totals["energy_j"]


def test_a_rank_holds_its_share_of_the_weights():
    full = build_transformer(LLAMA3_70B, mode="decode", batch=1, context=16)
    total = full.parameter_count()
    for tp in (2, 4, 8):
        rank = build_transformer(shard_spec(LLAMA3_70B, tp), mode="decode", batch=1, context=16)
        share = rank.parameter_count() * tp / total
        assert 1.0 <= share < 1.01  # norms (and replicated KV heads) are on every rank


def test_kv_heads_are_replicated_when_tp_exceeds_them():
    rank = shard_spec(LLAMA3_8B, 16)  # 8 KV heads over 16 ranks: one per rank, twice over
    assert (rank.heads, rank.kv, rank.dh) == (2, 1, 128)


@pytest.mark.parametrize("tp", [2, 4, 8])
def test_a_tp_step_is_sharded_compute_plus_its_collectives(tp):
    """CUDA-graph step: nothing overlaps a collective, so the step is the sharded model's
    step plus every collective's time from the link model."""
    system = node_for("h200")
    par = run_parallel(system, SPEC, tp=tp, exec_mode="graph")
    compute = run_gpu_model(load_machine("h200"),
                            build_transformer(shard_spec(LLAMA3_8B, tp), mode="decode",
                                              batch=8, context=1024),
                            exec_mode="graph", zoo_lowering="ops")  # ranks lower op by op
    graph = rank_graphs(SPEC, tp)[0]
    colls = [n.op for n in graph.nodes if isinstance(n.op, Collective)]
    assert sum(c.collective == "allreduce" for c in colls) == 2 * LLAMA3_8B.layers + 1
    assert sum(c.collective == "allgather" for c in colls) == 1
    ranks = list(system.device_names[:tp])
    comm = sum(run_collective(system, c.collective, c.bytes, ranks=ranks)["time_s"]
               for c in colls)
    assert par.totals["time_s"] == pytest.approx(compute.step_s + comm, rel=1e-9)
    assert par.totals["collective_s"] == pytest.approx(comm, rel=1e-9)


def test_all_reduce_bytes_are_the_tokens_hidden_activations():
    graph = rank_graphs(SPEC, 2)[0]
    ar = next(n.op for n in graph.nodes if n.name.endswith("o_proj.allreduce"))
    assert ar.bytes == 8 * LLAMA3_8B.hidden * 2  # batch 8 tokens x hidden x bf16


def test_pipeline_stages_split_the_layers_and_hand_on_activations():
    assert [len(s) for s in pipeline_stages(80, 3)] == [27, 27, 26]
    stages = rank_graphs(SPEC, 1, 2)
    first, last = stages
    assert first.nodes[0].name == "tok_embed" and last.nodes[-1].name == "lm_head"
    assert first.nodes[-1].op.collective == "send"
    assert first.nodes[-1].op.bytes == 8 * LLAMA3_8B.hidden * 2
    run = run_parallel("hgx_h200_x8", SPEC, tp=1, pp=2, exec_mode="graph")
    per = [r.totals["time_s"] for r in run.stages]
    assert run.totals["time_s"] == pytest.approx(sum(per))
    assert run.totals["pipeline_interval_s"] == max(per)


def test_a_sharded_model_fits_where_the_whole_does_not():
    with pytest.raises(AccelsimError, match="does not fit"):
        run_parallel("h200", "llama3_70b_decode:batch=8,context=4096")
    run = run_parallel("hgx_h200_x8", "llama3_70b_decode:batch=8,context=4096", tp=4,
                       exec_mode="graph")
    mem = run.totals["memory_per_gpu"][0]
    assert mem["weights_bytes"] < 141e9 / 4 + 1e9


@pytest.mark.parametrize("tp,pp,match", [(3, 1, "does not divide"), (8, 2, "needs 16 GPUs"),
                                         (0, 1, "positive integer")])
def test_bad_layouts_are_one_line_errors(tp, pp, match):
    with pytest.raises(AccelsimError, match=match) as exc:
        run_parallel("hgx_h200_x8", "llama3_70b_decode", tp=tp, pp=pp)
    assert "\n" not in str(exc.value)
    with pytest.raises(AccelsimError, match="more pipeline stages"):
        rank_graphs("llama3_70b_decode", 1, 81)


def test_non_transformers_do_not_shard():
    with pytest.raises(AccelsimError, match="not a transformer"):
        run_parallel("hgx_h200_x8", "resnet50", tp=2)
