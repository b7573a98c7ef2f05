"""Expert parallelism (``--ep``): experts split over data-parallel attention groups, the
all-to-all dispatch and combine each rank calls, TP inside the groups, one-line errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from accelsim.cli import main
from accelsim.config.registry import load_machine
from accelsim.devices.gpu_model import run_gpu_model
from accelsim.devices.parallel import node_for, rank_graphs, run_parallel
from accelsim.engine.collectives import run_collective
from accelsim.errors import AccelsimError
from accelsim.workload.models.hf_config import read_config, spec_from_config
from accelsim.workload.models.transformer import MIXTRAL_8X7B, build_transformer
from accelsim.workload.ops import GroupedGemm
from accelsim.workload.parallel import Collective, shard_spec

TINY = {"model_type": "mixtral", "hidden_size": 1024, "intermediate_size": 2048,
        "num_attention_heads": 8, "num_key_value_heads": 8, "num_hidden_layers": 2,
        "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 1000,
        "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}


@pytest.fixture
def moe(tmp_path: Path) -> str:
    path = tmp_path / "tiny_mixtral.json"
    path.write_text(json.dumps(TINY))
    return str(path)


def _arch(path: str):
    file, cfg = read_config(path)
    return spec_from_config(cfg, name="tiny_mixtral", file=file)


def test_ep1_is_exactly_the_run_without_expert_parallelism(moe):
    spec = f"{moe}:mode=decode,batch=8,context=256"
    h200 = load_machine("h200")
    alone = run_gpu_model(h200, spec, exec_mode="graph")
    one = run_parallel("h200", spec, ep=1, exec_mode="graph")
    assert one.step_s == alone.step_s and one.totals["energy_j"] == alone.totals["energy_j"]
    tp2 = run_parallel("hgx_h200_x8", spec, tp=2, exec_mode="graph")
    tp2_ep1 = run_parallel("hgx_h200_x8", spec, tp=2, ep=1, exec_mode="graph")
    assert tp2_ep1.totals == tp2.totals
    assert [n.op for n in rank_graphs(spec, 2, 1, 1)[0].nodes] == \
        [n.op for n in rank_graphs(spec, 2)[0].nodes]


@pytest.mark.parametrize(("tp", "ep", "batch"), [(1, 8, 16), (2, 4, 6), (2, 2, 1)])
def test_an_ep_step_is_sharded_compute_plus_its_all_to_alls(moe, tp, ep, batch):
    """CUDA-graph step: nothing overlaps a collective, so the step is rank 0's sharded model
    (its ceil(batch / ep) sequences, its experts) plus every collective from the link model:
    all-reduces over its TP group, all-to-alls over its EP group."""
    spec = f"{moe}:mode=decode,batch={batch},context=256"
    system = node_for("h200")
    par = run_parallel(system, spec, tp=tp, ep=ep, exec_mode="graph")
    arch = _arch(moe)
    rank_batch = math.ceil(batch / ep)
    compute = run_gpu_model(load_machine("h200"),
                            build_transformer(shard_spec(arch, tp, ep), mode="decode",
                                              batch=rank_batch, context=256,
                                              routed_tokens=batch),
                            exec_mode="graph", zoo_lowering="ops")
    colls = [n.op for n in rank_graphs(spec, tp, 1, ep)[0].nodes
             if isinstance(n.op, Collective)]
    a2a = [c for c in colls if c.collective == "alltoall"]
    assert len(a2a) == 2 * arch.layers and {c.group for c in a2a} == {"ep"}
    assert sum(c.collective == "allreduce" for c in colls) == (2 * arch.layers + 1
                                                               if tp > 1 else 0)
    names = list(system.device_names)
    groups = {"tp": names[:tp], "ep": names[:tp * ep:tp]}
    comm = sum(run_collective(system, c.collective, c.bytes, ranks=groups[c.group])["time_s"]
               for c in colls)
    assert comm > 0
    assert par.totals["time_s"] == pytest.approx(compute.step_s + comm, rel=1e-9)
    assert par.totals["collective_s"] == pytest.approx(comm, rel=1e-9)
    assert par.totals["gpus"] == tp * ep
    assert par.totals["tokens_per_step"] == batch


def test_all_to_all_bytes_and_the_ranks_expert_share(moe):
    arch = _arch(moe)
    graph = rank_graphs(f"{moe}:mode=decode,batch=8,context=64", 2, 1, 4)[0]
    d = arch.hidden
    dispatch = next(n.op for n in graph.nodes if n.name.endswith("experts_gate_up.dispatch"))
    combine = next(n.op for n in graph.nodes if n.name.endswith("experts_down.alltoall"))
    # rank 0 runs 2 of the 8 sequences; each token's hidden goes to its 2 experts (bf16)
    assert dispatch.bytes == 2 * 2 * d * 2 and dispatch.ranks == 4
    # its 2 experts computed ceil(8 x 2 / 4) = 4 rows, sent back
    assert combine.bytes == 4 * d * 2
    up = next(n.op for n in graph.nodes if isinstance(n.op, GroupedGemm))
    assert (up.experts, up.rows, up.routed_tokens, up.n) == (2, 4, 8, 2 * arch.ef // 2)
    w = graph.tensors["layers.0.moe.experts_gate_up.weight"].elements
    assert w == 2 * d * 2 * (arch.ef // 2)  # 2 of 8 experts, each TP-sharded 2 ways


def test_expert_parallelism_fits_mixtral_where_one_gpu_does_not():
    spec = "mixtral_8x7b_decode:batch=64,context=32768"
    with pytest.raises(AccelsimError, match="does not fit"):
        run_parallel("h200", spec)
    run = run_parallel("hgx_h200_x8", spec, ep=8, exec_mode="graph")
    mem = run.totals["memory_per_gpu"][0]
    experts = MIXTRAL_8X7B.layers * 3 * MIXTRAL_8X7B.hidden * MIXTRAL_8X7B.ef * 2  # one each
    assert experts < mem["weights_bytes"] < experts + 4e9  # + attention, embedding, head


@pytest.mark.parametrize(("model", "tp", "ep", "match"), [
    ("mixtral_8x7b_decode", 1, 3, "ep = 3: does not divide mixtral_8x7b's 8 routed experts"),
    ("mixtral_8x7b_decode", 4, 4, "tp x ep x pp = 16: needs 16 GPUs"),
    ("mixtral_8x7b_decode", 1, 0, "positive integer"),
    ("llama3_8b_decode", 1, 2, "llama3_8b has a dense FFN"),
])
def test_bad_ep_layouts_are_one_line_errors(model, tp, ep, match):
    with pytest.raises(AccelsimError, match=match) as exc:
        run_parallel("hgx_h200_x8", model, tp=tp, ep=ep)
    assert "\n" not in str(exc.value)


def test_cli_ep_runs_and_refuses_in_one_line(capsys, tmp_path):
    rc = main(["run", "hgx_h200_x8", "mixtral_8x7b_decode:batch=8", "--tp", "2", "--ep", "4",
               "--exec", "graph", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0 and "tp=2 ep=4 pp=1 (8 GPUs, graph)" in out
    assert main(["run", "hgx_h200_x8", "mixtral_8x7b_decode", "--ep", "3"]) == 2
    err = capsys.readouterr().err.strip()
    assert "ep = 3" in err and "\n" not in err
