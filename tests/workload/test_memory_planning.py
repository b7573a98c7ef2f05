"""Memory planning (liveness, peak, best-fit buffer reuse) and the training-memory estimate."""

from __future__ import annotations

import math

import pytest

from accelsim.workload.graph import GraphBuilder
from accelsim.workload.models import zoo
from accelsim.workload.nn_ops import Elementwise
from accelsim.workload.passes.memory import liveness, plan_memory
from accelsim.workload.passes.training import training_memory


def _diamond():
    """x -> a -> b -> add(a', b) with a big skip tensor: a lives across b."""
    g = GraphBuilder("diamond", "fp32")
    x = g.tensor("x", 1000)
    a = g.add(Elementwise(name="a", rows=10, cols=100, fn="relu"), [x], component="other")
    b = g.add(Elementwise(name="b", rows=10, cols=100, fn="relu"), [a], component="other")
    c = g.add(Elementwise(name="c", rows=10, cols=100, fn="relu"), [b], component="other")
    g.add(Elementwise(name="d", rows=10, cols=100, fn="add"), [a, c], component="other")
    return g.build()


def test_liveness_runs_from_producer_to_last_reader() -> None:
    live = liveness(_diamond()).set_index("tensor")
    assert (live.loc["x", "first"], live.loc["x", "last"]) == (-1, 0)
    assert (live.loc["a", "first"], live.loc["a", "last"]) == (0, 3)
    assert live.loc["d", "last"] == 4  # a graph output lives to the end


def test_peak_is_the_most_bytes_live_at_once_and_the_pool_reuses_freed_buffers() -> None:
    plan = plan_memory(_diamond())
    assert plan.naive_bytes == 5 * 4000
    assert plan.peak_bytes == 3 * 4000          # at c (and d): a, b|c, c|d
    assert plan.peak_bytes <= plan.pool_bytes <= plan.naive_bytes
    assert plan.pool_bytes == 3 * 4000
    assert plan.assignment["b"] == plan.assignment["x"]   # b takes x's freed buffer
    assert plan.assignment["d"] == plan.assignment["b"]   # and d takes it after b


def test_best_fit_takes_the_smallest_free_buffer_that_fits() -> None:
    g = GraphBuilder("sizes", "fp32")
    x = g.tensor("x", 400)
    y = g.tensor("y", 100)
    s = g.add(Elementwise(name="sum", rows=10, cols=10, fn="add"), [x, y], component="other")
    g.add(Elementwise(name="relu", rows=10, cols=10, fn="relu"), [s], component="other")
    plan = plan_memory(g.build())
    # after 'sum', x (1600 B) and y (400 B) are free: relu (400 B) takes y's, not x's
    assert plan.assignment["relu"] == plan.assignment["y"]
    assert plan.pool_bytes == 1600 + 400 + 400


def test_weights_and_kv_cache_are_persistent_not_pooled() -> None:
    g = zoo.get("llama3_8b_decode", context=2048)
    plan = plan_memory(g)
    kv = 2 * 32 * 8 * 128 * 2048 * 2
    assert plan.persistent_bytes == pytest.approx(g.parameter_count() * 2 + kv, rel=1e-3)
    assert plan.pool_bytes < 0.001 * plan.persistent_bytes
    assert plan.total_bytes == plan.pool_bytes + plan.persistent_bytes


def test_reuse_shrinks_resnet50_activation_memory_by_an_order_of_magnitude() -> None:
    plan = plan_memory(zoo.get("resnet50", batch=8))
    assert plan.reuse_factor > 10
    assert plan.pool_bytes < 1.25 * plan.peak_bytes


def test_adam_mixed_precision_costs_16_bytes_per_parameter() -> None:
    """ZeRO (Rajbhandari et al. 2020, sec. 3.1): 2 + 2 + 12 bytes per parameter."""
    g = zoo.get("gpt2_xl", seq=128)
    m = training_memory(g)
    p = g.parameter_count()
    assert m.weights_bytes + m.grads_bytes + m.optimizer_bytes == 16 * p
    fp32 = training_memory(zoo.get("gpt2_small", seq=64, dtype="fp32"))
    assert fp32.optimizer_bytes == 8 * zoo.get("gpt2_small").parameter_count()
    sgd = training_memory(g, optimizer="sgd", master_weights=False)
    assert sgd.optimizer_bytes == 0


def _uniform(layers: int):
    """``layers`` identical blocks of four 1000-element fp32 ops."""
    b = GraphBuilder("deep", "fp32")
    x = b.tensor("x", 1000)
    for i in range(layers):
        b.layer = i
        for j in range(4):
            x = b.add(Elementwise(name=f"l{i}.{j}", rows=1, cols=1000, fn="relu"), [x],
                      component="other")
    return b.build()


def test_activation_memory_is_linear_without_checkpointing_and_sqrt_with_it() -> None:
    """Seed S002-CKPT: checkpointing takes activation memory from O(n) to O(sqrt n)."""
    full = {n: training_memory(_uniform(n)).activations_bytes for n in (16, 64, 256)}
    ckpt = {n: training_memory(_uniform(n), checkpoint="sqrt").activations_bytes
            for n in (16, 64, 256)}
    assert full[64] / full[16] == pytest.approx(4, rel=0.02)
    assert full[256] / full[64] == pytest.approx(4, rel=0.02)
    assert ckpt[64] / ckpt[16] == pytest.approx(2, rel=0.05)
    assert ckpt[256] / ckpt[64] == pytest.approx(2, rel=0.05)
    # sqrt(n) segments of sqrt(n) layers: n/k boundaries + one segment of k layers
    n, k = 64, 8
    assert ckpt[64] == 4000 + (n // k) * 4000 + k * 4 * 4000
    assert training_memory(_uniform(64), checkpoint="sqrt").segments == math.isqrt(64)


def test_checkpointing_a_real_model_saves_most_activation_memory() -> None:
    g = zoo.get("gpt2_xl", seq=1024, batch=4)
    full = training_memory(g).activations_bytes
    ckpt = training_memory(g, checkpoint="sqrt").activations_bytes
    assert ckpt < 0.25 * full
    with pytest.raises(ValueError, match="checkpoint"):
        training_memory(g, checkpoint=0)
