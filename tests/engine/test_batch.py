"""The batch evaluator (many design points of one layer at once, for sweeps) equals
``simulate(..., mode="analytic")`` point by point."""

import numpy as np
import pytest

from accelsim.api import simulate
from accelsim.config.registry import load_machine
from accelsim.engine.analytic import DETAIL_COLUMNS, evaluate_layer_batch
from accelsim.errors import ConfigError
from accelsim.workload.ops import Conv2d, Gemm


@pytest.mark.parametrize("op", [Gemm(name="g", m=300, n=700, k=260),
                                Conv2d(name="c", c=32, h=28, w=28, k=48, r=3, s=3, pad=1,
                                       groups=2)])
def test_batch_equals_simulate_point_by_point(op):
    rng = np.random.default_rng(7)
    n = 24
    points = {"compute.array.rows": rng.integers(4, 130, n),
              "compute.array.cols": rng.integers(4, 130, n),
              "compute.array.count": rng.integers(1, 5, n),
              "memory.sram.capacity_bytes": np.exp(rng.uniform(np.log(4e3), np.log(64e6), n)),
              "memory.dram.bandwidth_bytes_per_s": np.exp(rng.uniform(np.log(1e9), np.log(2e12),
                                                                      n)),
              "dataflow": rng.choice(["os", "ws", "is"], n)}
    machine = load_machine("tpu_v4")
    batch = evaluate_layer_batch(machine, op, points, detail=True)
    assert set(DETAIL_COLUMNS) <= batch.keys()
    assert DETAIL_COLUMNS[0] not in evaluate_layer_batch(machine, op, points)
    for i in range(n):
        over = {k: v[i].item() for k, v in points.items() if k != "dataflow"}
        res = simulate("tpu_v4", op, dataflow=str(points["dataflow"][i]), mode="analytic",
                       energy=False, overrides=over)
        for key, value in res.totals.items():
            assert batch[key][i] == pytest.approx(value, rel=1e-12), (i, key)
            if isinstance(value, int):
                assert int(batch[key][i]) == value, (i, key)
        # detail: the layer's row (SRAM words exactly, DRAM bytes per operand, row folds)
        row = res.layers.iloc[0]
        for key in DETAIL_COLUMNS[:-1]:
            assert batch[key][i] == pytest.approx(float(row[key]), rel=1e-12), (i, key)
            if key.startswith("sram_"):
                assert int(batch[key][i]) == int(row[key]), (i, key)
        assert batch["row_folds"][i] == res.runs[0].plan.geometry.row_folds


def test_batch_rejects_fields_it_does_not_vary():
    with pytest.raises(ConfigError, match="not a batch field"):
        evaluate_layer_batch(load_machine("tpu_v4"), Gemm(name="g", m=8, n=8, k=8),
                             {"memory.sram.ifmap_fraction": np.array([0.5])})
