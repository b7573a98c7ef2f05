"""Causal attention's CTAs start in launch order, the shortest first (``hw/gpu/attention.py``;
cuDNN's causal flash kernel on the H200 is not scheduled longest first: run 11)."""

from __future__ import annotations

from dataclasses import replace

from accelsim.config.registry import load_machine
from accelsim.hw.gpu.attention import plan_attention
from accelsim.hw.gpu.kernel import closed_form_s
from accelsim.workload.nn_ops import Attention


def test_causal_ctas_start_shortest_first_and_the_tail_costs_what_lpt_would_save():
    m = load_machine("h200")
    op = Attention(name="a", batch=1, heads=32, seq_q=4096, seq_kv=4096, head_dim=128,
                   causal=True, dtype="bf16")
    k, _memset = plan_attention(m, op, "bf16")
    lengths = [cta.compute_s for _, cta in k.groups]
    assert len(lengths) == 32 and lengths == sorted(lengths)  # 32 query blocks, ascending
    lpt = replace(k, groups=tuple(reversed(k.groups)))
    assert closed_form_s(k, m) > closed_form_s(lpt, m)
    full = Attention(name="a", batch=1, heads=32, seq_q=4096, seq_kv=4096, head_dim=128,
                     causal=False, dtype="bf16")
    kf, _memset = plan_attention(m, full, "bf16")
    assert len(kf.groups) == 1  # no mask: every CTA as long, order immaterial
