"""PyTorch's mean over the last dim (reduce_kernel<512, 1>): launch shape, latency chain,
and whole models routing LlamaRMSNorm's mean(-1) through it."""

from __future__ import annotations

import pytest

from accelsim.api.model_run import run_model
from accelsim.config.registry import load_machine
from accelsim.errors import ConfigError
from accelsim.hw.gpu.kernel import estimate_s
from accelsim.hw.gpu.reduce import row_mean_kernel, row_reduce_launch


@pytest.fixture(scope="module")
def h200():
    return load_machine("h200")


@pytest.mark.parametrize("rows, expected", [
    (1, (1, 512, 2)),       # one 512-lane block, 1024 vectors: 2 loads per lane
    (4, (1, 512, 8)),       # 128 x 4 threads
    (16, (1, 512, 32)),     # 32 x 16: one warp per row, 32 loads per lane
    (256, (16, 512, 32)),   # more rows, more blocks, the same chain
])
def test_launch_follows_setReduceConfig_for_4096_wide_rows(rows, expected):
    assert row_reduce_launch(rows, 4096) == expected


def test_short_rows_are_not_vectorised_and_wide_rows_split_across_warps():
    assert row_reduce_launch(64, 100)[2] == 4          # 100 scalars over 32 lanes
    ctas, threads, loads = row_reduce_launch(2, 262144)  # 65536 vectors, 256 x 2 threads
    assert (ctas, threads) == (2, 512) and loads == 65536 // 512


def test_chain_not_row_count_sets_the_time_while_blocks_fit_one_wave(h200):
    t = {r: estimate_s(row_mean_kernel(h200, r, 4096, 4), h200) for r in (1, 16, 256)}
    assert t[16] > 2.5 * t[1]                      # 32 dependent loads per lane vs 2
    assert t[256] == pytest.approx(t[16], rel=0.02)  # 16 blocks: still one wave


def test_round_trips_scale_the_chain(h200):
    fast = load_machine("h200", {"compute.reduce_round_trips": 0.4})
    slow, quick = (estimate_s(row_mean_kernel(m, 64, 4096, 4), m) for m in (h200, fast))
    assert slow - quick == pytest.approx(32 * 0.4 * h200.memory.l2_latency_s, rel=0.05)


def test_bad_reduce_round_trips_is_a_one_line_config_error():
    with pytest.raises(ConfigError, match=r"h200\.yaml: compute\.reduce_round_trips = 0"):
        load_machine("h200", {"compute.reduce_round_trips": 0})


def test_llama_rmsnorm_mean_runs_as_the_reduce_kernel():
    """The norm class grows by the mean kernel's chain (2 -> 32 loads per lane) from batch 1
    to batch 16, far more than its bytes would (64 KiB of fp32 per row block)."""
    norm = {}
    for b in (1, 16):
        run = run_model("h200", f"llama3_8b_decode:batch={b},context=128", exec_mode="graph")
        calls = run.calls[run.calls["call_class"] == "reduce"]
        assert len(calls) == 65  # 32 layers x 2 norms + the final norm
        norm[b] = calls["gpu_s"].mean()
    assert norm[16] - norm[1] > 5e-6
