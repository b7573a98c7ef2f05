"""Cross-platform comparison: every kernel runs on every platform through the platform's own
model, and the derived columns are consistent with the raw ones."""

import dataclasses

import pytest

from accelsim.api.compare import COLUMNS, compare, load_platform, with_fallback
from accelsim.api.gpu import simulate_op
from accelsim.errors import ConfigError
from accelsim.workload.nn_ops import LayerNorm
from accelsim.workload.ops import Gemm

HW = ["a100", "tpu_v4", "npu_ascend910", "spr_cpu"]
SMALL = [Gemm(name="mm", m=1024, n=1024, k=1024, dtype="bf16"),
         LayerNorm(name="ln", rows=2048, cols=1024, dtype="bf16")]


@pytest.fixture(scope="module")
def small():
    return compare(SMALL, HW)


def test_one_row_per_kernel_and_platform(small):
    t = small.table
    assert list(t.columns) == COLUMNS
    assert len(t) == len(SMALL) * len(HW)
    assert set(t["family"]) == {"gpu", "systolic", "cpu"}


def test_derived_columns_follow_from_time_and_flops(small):
    t = small.table
    assert (t["tflops"] * 1e12 * t["time_s"]).round(0).tolist() == t["flops"].round(0).tolist()
    assert ((t["util"] - t["tflops"] / t["peak_tflops"]).abs() < 1e-12).all()
    assert (t["energy_j"] > 0).all()
    assert (t["util"] <= 1.0).all() and (t["bw_util"] <= 1.0).all()


def test_gpu_rows_are_the_gpu_models_own_numbers(small):
    row = small.table.query("hw == 'a100' and kernel == 'mm'").iloc[0]
    assert row["time_s"] == simulate_op("a100", SMALL[0], mode="analytic")["time_s"]


def test_layernorm_is_memory_bound_everywhere_matmul_is_not(small):
    t = small.table
    assert set(t.query("kernel == 'ln'")["bound_class"]) <= {"memory", "compute"}
    ln = t.query("kernel == 'ln'")
    assert (ln["util"] < 0.05).all()
    mm = t.query("kernel == 'mm'")
    assert (mm["util"] > ln["util"].max()).all()


def test_energy_table_choice_changes_energy_not_time():
    own = compare(SMALL[:1], ["tpu_v4"]).table.iloc[0]
    old = compare(SMALL[:1], ["tpu_v4"], energy_table="horowitz_45nm").table.iloc[0]
    assert own["time_s"] == old["time_s"]
    # tpu_v4's own table is its 7 nm node: the same actions cost less than at 45 nm
    assert old["energy_j"] > 2 * own["energy_j"]


def test_compare_prices_a_machine_as_run_does():
    """One default: compare's energy of a GEMM on a systolic machine is the energy `run`
    reports for the same GEMM (dynamic + leakage, the machine's own table)."""
    from accelsim.api import simulate
    from accelsim.workload.ops import Workload

    row = compare(SMALL[:1], ["tpu_v4"]).table.iloc[0]
    r = simulate("tpu_v4", Workload("mm", (SMALL[0],)), mode="analytic")
    assert row["energy_j"] == pytest.approx(r.energy.total_pj * 1e-12, rel=1e-9)


def test_gpu_energy_includes_static_power_over_the_kernel_time():
    from accelsim.api.compare import load_platform, run_kernel
    from accelsim.report.energy import energy_table_for
    from accelsim.report.power import static_power_w

    m = load_platform("a100")
    table = energy_table_for(m)
    with_static = run_kernel(m, SMALL[0], table=table)
    leak = sum(static_power_w(m, table).values())
    assert leak > 0
    no_leak = table.with_overrides({"static.pe": "0 W", "static.sram_per_kib": "0 W",
                                    "static.gpu_idle_pe": "0 W"})
    without = run_kernel(m, SMALL[0], table=no_leak)
    assert with_static["energy_j"] - without["energy_j"] == pytest.approx(
        leak * with_static["time_s"])


def test_unknown_platform_fails_before_any_work():
    with pytest.raises(ConfigError, match="unknown hardware"):
        compare(SMALL, ["a100", "nope"])


def test_a_system_is_not_a_kernel_platform():
    with pytest.raises(ConfigError, match="needs a single device"):
        compare(SMALL, ["dgx_a100"])


def test_pivot_gives_kernels_by_platform(small):
    p = small.pivot("time_s")
    assert list(p.columns) == HW and list(p.index) == ["mm", "ln"]
    doc = small.to_dict()
    assert doc["energy_table"] == "machine" and len(doc["rows"]) == 8


def test_aliases_name_their_configs_and_are_recorded():
    c = compare(SMALL[:1], ["npu", "cpu", "spr_cpu"])
    assert c.hw == ("npu_ascend910", "spr_cpu")  # the alias and its config run once
    assert c.table["alias"].tolist() == ["npu", "cpu"]
    assert c.to_dict()["aliases"] == {"npu": "npu_ascend910", "cpu": "spr_cpu"}
    assert compare(SMALL[:1], ["spr_cpu"]).table["alias"].tolist() == [""]


def test_bf16_falls_back_to_fp16_on_a_gpu_without_bf16():
    t = compare(SMALL, ["v100", "a100"]).table.set_index(["kernel", "hw"])
    v = t.loc[("mm", "v100")]
    assert (v["requested_precision"], v["precision"]) == ("bf16", "fp16")
    fp16 = dataclasses.replace(SMALL[0], dtype="fp16")
    assert v["time_s"] == simulate_op("v100", fp16, mode="analytic")["time_s"]
    a = t.loc[("mm", "a100")]  # a machine with bf16 runs bf16
    assert (a["requested_precision"], a["precision"]) == ("bf16", "bf16")


def test_fallback_changes_only_the_precision_a_machine_lacks():
    v100 = load_platform("v100")
    fp32 = Gemm(name="mm", m=64, n=64, k=64, dtype="fp32")
    assert with_fallback(v100, fp32) is fp32
    assert with_fallback(load_platform("a100"), SMALL[0]) is SMALL[0]
    assert with_fallback(v100, SMALL[0]).dtype == "fp16"


def test_a_systolic_array_runs_its_own_precision_and_says_so():
    row = compare(SMALL[:1], ["npu"]).table.iloc[0]
    assert (row["requested_precision"], row["precision"]) == ("bf16", "fp16")
