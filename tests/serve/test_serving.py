"""Serving: engines as data, the step model and its cache, the discrete-event engine."""

from __future__ import annotations

import json
import math

import pytest

from accelsim.api.serving import serve
from accelsim.config.registry import load_machine
from accelsim.errors import AccelsimError, ConfigError
from accelsim.files import builtin_names
from accelsim.serve.engine import load_engine
from accelsim.serve.requests import Request, fixed_requests, read_trace
from accelsim.serve.step_model import StepModel, context_bucket
from accelsim.workload.models.transformer import GPT2_SMALL, LLAMA3_8B
from accelsim.workload.parallel import PrefillChunk, StepBatch

MODEL = "gpt2_small"


@pytest.fixture(scope="module")
def node():
    return load_machine("hgx_h200_x8")


def test_every_built_in_engine_loads():
    names = builtin_names("engines")
    assert {"vllm", "sglang", "tensorrt_llm"} <= set(names)
    for name in names:
        eng = load_engine(name)
        assert eng.max_num_seqs > 0 and 0 < eng.gpu_memory_utilization <= 1


def test_engine_overrides_are_checked():
    assert load_engine("vllm", {"max_num_seqs": 8}).max_num_seqs == 8
    with pytest.raises(ConfigError, match="not an engine field"):
        load_engine("vllm", {"max_seqs": 8})
    with pytest.raises(ConfigError, match="max_num_seqs"):
        load_engine("vllm", {"max_num_seqs": -1})


def test_graph_batch_pads_to_capture_sizes():
    eng = load_engine("vllm")
    assert [eng.graph_batch(d) for d in (1, 3, 5, 9, 512)] == [1, 4, 8, 16, 512]
    assert eng.graph_batch(513) is None


def test_context_buckets_stay_within_3_percent():
    for n in range(1, 70000, 37):
        assert abs(context_bucket(n) - n) <= 0.032 * n


def test_cached_step_equals_direct_evaluation(node):
    eng = load_engine("vllm")
    batch = StepBatch(decode=30, decode_context=30 * 700,
                      prefill=(PrefillChunk(512), PrefillChunk(512), PrefillChunk(200, 512)))
    cached = StepModel(node, LLAMA3_8B, eng, tp=2)
    first = cached.step(batch)
    again = cached.step(batch)
    direct = StepModel(node, LLAMA3_8B, eng, tp=2).evaluate(cached.key(batch))
    assert again is first and cached.evaluations <= 1  # (0: an earlier model filled it)
    assert direct.stage_s == first.stage_s and direct.energy_j == first.energy_j


def test_layer_extrapolation_equals_the_full_build(node):
    from accelsim.devices.gpu_model import run_gpu_model

    eng = load_engine("vllm", {"step_overhead_s": 0})
    model = StepModel(node, LLAMA3_8B, eng, tp=2)
    batch = StepBatch(decode=16, decode_context=16 * 300, prefill=(PrefillChunk(256),))
    key = model.key(batch)
    full = run_gpu_model(model.gpu, model._graph(LLAMA3_8B.layers, key), exec_mode="serving",
                         collective=model.pricers[0], check_fit=False)
    assert model.evaluate(key).time_s == pytest.approx(full.totals["time_s"], rel=1e-9)


def test_pipeline_stages_extrapolate_like_the_full_build(node):
    from accelsim.devices.gpu_model import step_totals
    from accelsim.workload.parallel import stage_graph

    eng = load_engine("vllm", {"step_overhead_s": 0})
    model = StepModel(node, LLAMA3_8B, eng, tp=2, pp=3)
    key = model.key(StepBatch(decode=24, decode_context=24 * 900))
    full = model._graph(LLAMA3_8B.layers, key)
    got = model.evaluate(key).stage_s
    for s in range(3):
        want = step_totals(model.gpu, stage_graph(full, model.stages, s), exec_mode="serving",
                           collective=model.pricers[s])["time_s"]
        assert got[s] == pytest.approx(want, rel=1e-9)


def test_step_totals_are_the_model_runs_totals():
    from accelsim.devices.gpu_model import run_gpu_model, step_totals

    h200 = load_machine("h200")
    for mode in ("eager", "serving"):
        run = run_gpu_model(h200, "llama3_8b_decode:batch=4,context=512", exec_mode=mode).totals
        fast = step_totals(h200, "llama3_8b_decode:batch=4,context=512", exec_mode=mode)
        assert fast["time_s"] == run["time_s"]
        assert fast["gpu_busy_s"] == pytest.approx(run["gpu_busy_s"], rel=1e-12)
        assert fast["energy_j"] == pytest.approx(run["energy_j"], rel=1e-12)


def _lone_request_figures(node, isl, osl):
    """Step times of one request alone: its prefill, then decodes at growing context."""
    eng = load_engine("vllm")
    model = StepModel(node, GPT2_SMALL, eng)
    prefill = model.step(StepBatch(prefill=(PrefillChunk(isl),))).time_s
    decodes = [model.step(StepBatch(decode=1, decode_context=isl + i + 1)).time_s
               for i in range(osl - 1)]
    return prefill, decodes


def test_a_lone_request_takes_its_step_times(node):
    res = serve(node, MODEL, isl=200, osl=20, requests=3, rate=0.01)  # far apart: alone
    prefill, decodes = _lone_request_figures(node, 200, 20)
    row = res.requests.iloc[0]
    assert row["ttft_s"] == pytest.approx(prefill, rel=1e-9)
    assert row["e2e_s"] == pytest.approx(prefill + sum(decodes), rel=1e-9)
    assert row["tpot_s"] == pytest.approx(sum(decodes) / 19, rel=1e-9)


def test_every_request_finishes_and_tokens_are_conserved(node):
    res = serve(node, MODEL, isl=300, osl=40, requests=120, rate=50)
    s = res.summary
    assert s["finished"] == 120
    assert (res.requests["generated"] == 40).all()
    assert s["output_tokens_per_s"] == pytest.approx(120 * 40 / s["makespan_s"])
    assert (res.iterations["kv_blocks_used"] <= s["kv_cache_blocks"]).all()
    assert (res.iterations["sequences"] <= load_engine("vllm").max_num_seqs).all()
    assert (res.iterations["decode"] + res.iterations["prefill_tokens"]
            <= load_engine("vllm").max_num_batched_tokens).all()
    assert s["ttft_s"]["p50"] <= s["ttft_s"]["p99"]


def test_more_load_means_longer_ttft(node):
    slow = serve(node, MODEL, isl=500, osl=30, requests=60, rate=5).summary
    fast = serve(node, MODEL, isl=500, osl=30, requests=60, rate="inf").summary
    assert fast["ttft_s"]["mean"] > slow["ttft_s"]["mean"]
    assert fast["output_tokens_per_s"] > slow["output_tokens_per_s"]


@pytest.mark.parametrize("mode", ["recompute", "swap"])
def test_a_small_kv_cache_preempts_and_still_finishes(node, mode):
    eng = {"max_kv_tokens": 6000, "preemption": mode}  # 64 x 300 tokens would need 19200
    res = serve(node, MODEL, isl=100, osl=200, requests=64, rate="inf", overrides=eng)
    assert res.summary["preemptions"] > 0
    assert res.summary["finished"] == 64
    assert (res.requests["generated"] == 200).all()


def test_a_request_larger_than_the_kv_cache_is_refused(node):
    with pytest.raises(AccelsimError, match="KV cache holds"):
        serve(node, MODEL, isl=900, osl=100, requests=2, overrides={"max_kv_tokens": 512})
    with pytest.raises(AccelsimError, match="KV cache holds 0 tokens"):
        serve(node, MODEL, isl=500, osl=100, requests=2,
              overrides={"gpu_memory_utilization": 0.001})


def test_replicas_share_the_load(node):
    one = serve(node, MODEL, isl=400, osl=30, requests=80, rate="inf")
    two = serve(node, MODEL, isl=400, osl=30, requests=80, rate="inf", replicas=2)
    per = two.iterations.groupby("replica")[["decode", "prefill_tokens"]].sum()
    assert per.loc[0].tolist() == per.loc[1].tolist()  # the router splits the stream evenly
    assert two.summary["output_tokens_per_s"] > one.summary["output_tokens_per_s"]
    assert two.settings["gpus"] == 2


def test_goodput_counts_requests_within_the_slo(node):
    res = serve(node, MODEL, isl=300, osl=20, requests=50, rate="inf", slo="ttft=50ms")
    met = (res.requests["ttft_s"] <= 0.05).sum()
    assert res.summary["goodput_requests_per_s"] == pytest.approx(met / res.summary["makespan_s"])
    with pytest.raises(ConfigError, match="unknown bound"):
        serve(node, MODEL, requests=2, slo="latency=1s")


def test_trace_files_are_read_and_bad_rows_named(tmp_path):
    good = tmp_path / "t.csv"
    good.write_text("arrival_s,input_tokens,output_tokens\n0.5,10,5\n0,20,3\n")
    reqs = read_trace(good)
    assert [(r.arrival_s, r.input_tokens) for r in reqs] == [(0.0, 20), (0.5, 10)]
    bad = tmp_path / "b.csv"
    bad.write_text("arrival_s,input_tokens,output_tokens\n0,10,5\n1,-3,5\n")
    with pytest.raises(ConfigError, match=r"row 2\.input_tokens"):
        read_trace(bad)
    jl = tmp_path / "t.jsonl"
    jl.write_text(json.dumps({"arrival_s": 0, "input_tokens": 4, "output_tokens": 2}) + "\n{x\n")
    with pytest.raises(ConfigError, match="line 2"):
        read_trace(jl)


def test_poisson_arrivals_have_the_asked_rate():
    reqs = fixed_requests(4000, 10, 10, rate=20.0, seed=1)
    span = reqs[-1].arrival_s - reqs[0].arrival_s
    assert 4000 / span == pytest.approx(20.0, rel=0.05)
    assert all(isinstance(r, Request) for r in reqs)


def test_exact_poisson_arrivals_are_the_same_draw_at_exactly_the_rate():
    """``poisson-exact`` keeps a seed's gaps (their order and relative sizes: the burstiness)
    and rescales them so n requests span (n - 1) / rate; seed 0's 500 plain gaps run long."""
    plain = fixed_requests(500, 10, 10, rate=2.0, seed=0)
    exact = fixed_requests(500, 10, 10, rate=2.0, seed=0, arrivals="poisson-exact")
    assert exact[-1].arrival_s == pytest.approx(499 / 2.0)
    assert plain[-1].arrival_s > 1.05 * exact[-1].arrival_s
    ratio = [e.arrival_s / p.arrival_s for e, p in zip(exact[1:], plain[1:], strict=True)]
    assert max(ratio) == pytest.approx(min(ratio))
    with pytest.raises(ConfigError, match="arrivals"):
        fixed_requests(5, 10, 10, rate=2.0, arrivals="uniform")


def test_a_light_load_serves_at_the_offered_rate_with_exact_arrivals(node):
    """At a load far below capacity every request finishes soon after it arrives, so the
    output rate is the arrival rate times the output length, up to the last request's own
    latency: within 1 % with exact arrivals, where seed 0's plain draw runs 9 % low."""
    kw = dict(isl=100, osl=20, requests=500, rate=5.0)
    exact = serve(node, MODEL, arrivals="poisson-exact", **kw).summary["output_tokens_per_s"]
    plain = serve(node, MODEL, **kw).summary["output_tokens_per_s"]
    assert exact == pytest.approx(5.0 * 20, rel=0.01)
    assert plain < 0.93 * 5.0 * 20


def test_the_json_document_has_percentiles(node):
    res = serve(node, MODEL, isl=100, osl=10, requests=10)
    doc = json.loads(res.to_json())
    for key in ("ttft_s", "tpot_s", "itl_s", "e2e_s"):
        assert set(doc[key]) == {"mean", "p50", "p90", "p99"}
    assert doc["settings"]["engine"] == "vllm" and doc["output_tokens_per_s"] > 0
    assert math.isfinite(doc["energy_per_output_token_j"])


def test_prefill_decode_disaggregation(node):
    res = serve(node, MODEL, isl=300, osl=30, requests=60, rate=100, disaggregate="1:2")
    its = res.iterations
    assert res.summary["finished"] == 60 and (res.requests["generated"] == 30).all()
    assert (its.loc[its["replica"] == 0, "decode"] == 0).all()          # prefill only
    assert (its.loc[its["replica"] > 0, "prefill_tokens"] == 0).all()   # decode only
    assert set(its.loc[its["replica"] > 0, "replica"]) == {1, 2}        # both decode replicas
    assert res.settings["disaggregate"] == "1:2" and res.settings["gpus"] == 3
    # the copy of the KV cache sits between the first token and the second
    lone = serve(node, MODEL, isl=300, osl=2, requests=1, disaggregate="1:1").requests.iloc[0]
    together = serve(node, MODEL, isl=300, osl=2, requests=1).requests.iloc[0]
    assert lone["ttft_s"] == pytest.approx(together["ttft_s"], rel=1e-9)
    assert lone["e2e_s"] > together["e2e_s"]
    for bad in ("2", "0:1", "a:b", "1:1:1"):
        with pytest.raises(ConfigError, match="expected P:D"):
            serve(node, MODEL, requests=2, disaggregate=bad)
    with pytest.raises(ConfigError, match="not both"):
        serve(node, MODEL, requests=2, disaggregate="1:1", replicas=2)


def test_tensorrt_llm_sizes_its_kv_cache_from_the_memory_left_free():
    """TensorRT-LLM's fraction is of the memory free after weights and activations
    (free_gpu_memory_fraction), vLLM's of the whole HBM: a 70B FP8 model nearly fills one
    H100, so vLLM's 0.90 of 80 GB leaves (almost) nothing for the KV cache while TensorRT-LLM
    keeps 90 % of what is left."""
    from accelsim.devices.parallel import transformer_of

    arch, _ = transformer_of("workloads/hf/llama3.1_70b.json")
    h100 = load_machine("hgx_h100_x8")
    blocks = {}
    for basis in ("total", "free"):
        eng = load_engine("tensorrt_llm", {"gpu_memory_fraction_of": basis})
        sm = StepModel(h100, arch, eng, dtype="fp8")
        blocks[basis] = sm.kv_blocks()
        if basis == "free":
            free_bytes = blocks[basis] * eng.kv_block_tokens * sm.kv_bytes_per_token
            left = sm.gpu.memory.hbm.capacity_bytes - sm.weights_bytes_per_gpu()
            assert 0.8 * left * 0.9 < free_bytes < 0.9 * left  # 90 % of what weights leave
    assert blocks["free"] > 3 * max(blocks["total"], 1)
    with pytest.raises(ConfigError, match="gpu_memory_fraction_of"):
        load_engine("tensorrt_llm", {"gpu_memory_fraction_of": "half"})


def test_a_moe_model_serves_and_its_layers_extrapolate(node):
    """Mixtral under TP 2: every layer's MoE block is the same, so the two-layer extrapolation
    equals the full build; one iteration's tokens share one grouped GEMM per expert GEMM."""
    from accelsim.devices.gpu_model import run_gpu_model
    from accelsim.workload.models.transformer import MIXTRAL_8X7B
    from accelsim.workload.ops import GroupedGemm

    eng = load_engine("vllm", {"step_overhead_s": 0})
    model = StepModel(node, MIXTRAL_8X7B, eng, tp=2)
    batch = StepBatch(decode=8, decode_context=8 * 300, prefill=(PrefillChunk(128),))
    key = model.key(batch)
    graph = model._graph(MIXTRAL_8X7B.layers, key)
    grouped = [n.op for n in graph.nodes if isinstance(n.op, GroupedGemm)]
    assert len(grouped) == 2 * MIXTRAL_8X7B.layers
    assert {op.routed_tokens for op in grouped} == {8 + 128}
    full = run_gpu_model(model.gpu, graph, exec_mode="serving",
                         collective=model.pricers[0], check_fit=False)
    assert model.evaluate(key).time_s == pytest.approx(full.totals["time_s"], rel=1e-9)
    r = serve("h200", "mixtral_8x7b", tp=2, isl=64, osl=8, requests=4)
    assert r.summary["finished"] == 4 and (r.requests["generated"] == 8).all()


def test_a_serving_engine_runs_its_gpus_at_the_sustained_clocks(node):
    """Minutes at load: the power cap holds a tensor-core GEMM's clock below the short
    calibration timings' (h200.yaml ``compute.sustained_tensor_time_ratio``, measured). A
    compute-bound prefill iteration slows by up to that ratio; a memory-bound decode one
    hardly moves; CUDA-core fp32 clocks never change."""
    h200 = load_machine("h200")
    ratio = h200.compute.sustained_tensor_time_ratio
    held = h200.sustained()
    assert ratio > 1.0
    assert held.load_clock_hz("bf16") == pytest.approx(h200.load_clock_hz("bf16") / ratio)
    assert held.load_clock_hz("fp8") == pytest.approx(h200.load_clock_hz("fp8") / ratio)
    assert held.load_clock_hz("fp32") == h200.load_clock_hz("fp32")
    steady = load_machine("h200", {"compute.sustained_tensor_time_ratio": 1.0})
    assert steady.sustained() is steady
    eng = load_engine("vllm", {"step_overhead_s": 0})
    prefill = StepBatch(decode=0, decode_context=0, prefill=(PrefillChunk(2048),))
    decode = StepBatch(decode=8, decode_context=8 * 512, prefill=())
    for batch, lo, hi in ((prefill, 1.03, ratio), (decode, 1.0, 1.02)):
        slow = StepModel(node, LLAMA3_8B, eng, gpu=h200).step(batch).time_s
        fast = StepModel(node, LLAMA3_8B, eng, gpu=steady).step(batch).time_s
        assert lo <= slow / fast <= hi + 1e-9
