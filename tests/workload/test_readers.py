"""Workload readers: SCALE-Sim topology CSVs and accelsim YAML, with one-line errors."""

import pytest

from accelsim.errors import WorkloadError
from accelsim.workload.ops import Conv2d, Gemm
from accelsim.workload.readers import load_workload, read_scalesim_topology, read_yaml_workload


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_conv_rows_lower_like_scalesim(tmp_path):
    p = write(tmp_path, "t.csv", "Layer name, IFMAP Height, IFMAP Width, Filter Height, "
              "Filter Width, "
              "Channels, Num Filter, Strides,\nConv2_1a, 56, 56, 3, 3, 64, 64, 1,\n")
    wl = read_scalesim_topology(p)
    op = wl.ops[0]
    assert isinstance(op, Conv2d)
    g = op.lower()
    assert (g.m, g.n, g.k) == (54 * 54, 64, 576)


def test_gemm_rows(tmp_path):
    p = write(tmp_path, "g.csv", "Layer, M, N, K,\nfc, 256, 128, 256,\n")
    op = read_scalesim_topology(p).ops[0]
    assert isinstance(op, Gemm) and (op.m, op.n, op.k) == (256, 128, 256)


def test_depthwise_layers_by_name(tmp_path):
    """SCALE-Sim's ``DP`` layer: every channel convolved with its own ``Nf`` filters."""
    from accelsim.workload.scalesim_topology import scalesim_layers

    p = write(tmp_path, "d.csv",
              "Layer name, H, W, R, S, C, Nf, S,\nDP_conv, 16, 16, 3, 3, 32, 2, 1,\n")
    op = read_scalesim_topology(p).ops[0]
    assert op.groups == 32 and op.k == 64
    assert op.lower().repeat == 32 and op.lower().n == 2 and op.lower().k == 9
    assert op.macs == sum(layer.macs for layer in scalesim_layers(p))


def test_non_numeric_column_names_row_and_column(tmp_path):
    p = write(tmp_path, "bad.csv", "Layer, M, N, K,\nfc, 256, abc, 256,\n")
    with pytest.raises(WorkloadError) as err:
        read_scalesim_topology(p)
    assert "row 2 column 'N' = 'abc'" in str(err.value) and "bad.csv" in str(err.value)


def test_missing_columns(tmp_path):
    p = write(tmp_path, "short.csv", "Layer name, H, W, R, S, C, Nf, S,\nc1, 56, 56, 3,\n")
    with pytest.raises(WorkloadError, match="expected 8 columns"):
        read_scalesim_topology(p, "conv")


def test_zero_dimension(tmp_path):
    p = write(tmp_path, "z.csv", "Layer, M, N, K,\nfc, 0, 4, 4,\n")
    with pytest.raises(WorkloadError, match="positive integer"):
        read_scalesim_topology(p)


def test_yaml_workload_and_defaults(tmp_path):
    p = write(tmp_path, "w.yaml", "name: w\ndefaults: {n: 4}\nops:\n"
              "  - {op: conv2d, name: c, c: 3, h: 32, w: 32, k: 8, r: 3, s: 3, pad: 1}\n"
              "  - {op: gemm, name: g, m: 4, n: 10, k: 8}\n")
    wl = read_yaml_workload(p)
    assert wl.ops[0].n == 4 and wl.ops[0].lower().m == 4 * 32 * 32


def test_yaml_misspelt_field(tmp_path):
    p = write(tmp_path, "w.yaml", "ops:\n  - {op: gemm, name: g, m: 4, nn: 10, k: 8}\n")
    with pytest.raises(WorkloadError,
                       match=r"ops\[0\].nn = 10: unknown field \(did you mean 'n'\?\)"):
        read_yaml_workload(p)


def test_yaml_unknown_op(tmp_path):
    p = write(tmp_path, "w.yaml", "ops:\n  - {op: gemn, name: g, m: 4, n: 10, k: 8}\n")
    with pytest.raises(WorkloadError, match="did you mean 'gemm'"):
        read_yaml_workload(p)


def test_missing_file():
    with pytest.raises(WorkloadError):
        read_scalesim_topology("/nonexistent/topology.csv")
    with pytest.raises(WorkloadError, match="no such file, built-in workload or zoo model"):
        load_workload("/nonexistent/w.yaml")


def test_conv_output_size_with_padding_and_stride():
    op = Conv2d(name="c", c=3, h=224, w=224, k=64, r=7, s=7, stride=2, pad=3)
    assert (op.out_h, op.out_w) == (112, 112)
    assert op.macs == 112 * 112 * 64 * 3 * 49
