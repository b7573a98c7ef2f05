"""``accelsim scalesim``: SCALE-Sim's cfg and topology in, SCALE-Sim's three CSVs out.

Expected numbers are SCALE-Sim 3.0's own output for the same files (see
``tests/reference/test_scalesim_parity.py``, which runs SCALE-Sim itself).
"""

import math

import pytest

from accelsim.cli import main
from accelsim.config.registry import load_machine
from accelsim.config.scalesim_cfg import DEFAULT_CFG, read_scalesim_cfg
from accelsim.errors import ConfigError, UnsupportedError
from accelsim.report.scalesim_reports import (
    BANDWIDTH_HEADER,
    COMPUTE_HEADER,
    DETAIL_HEADER,
)
from accelsim.workload.scalesim_topology import scalesim_layers, topology_workload

SCALE_CFG = DEFAULT_CFG.read_text()  # SCALE-Sim's configs/scale.cfg (v3.0.0), shipped

GEMM = "Layer, M, N, K,\ng1, 64, 40, 33,\ng2, 100, 33, 70,\n"
CONV = ("Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, "
        "Num Filter, Strides,\nc1, 12, 12, 3, 3, 4, 33, 1,\ndw_DP, 8, 8, 3, 3, 3, 1, 1,\n")


@pytest.fixture
def files(tmp_path):
    (tmp_path / "scale.cfg").write_text(SCALE_CFG)
    (tmp_path / "gemm.csv").write_text(GEMM)
    (tmp_path / "conv.csv").write_text(CONV)
    return tmp_path


def _rows(path):
    return [line[:-1].split(", ") for line in path.read_text().splitlines()[1:]]


def test_writes_scalesims_three_reports_with_its_exact_layout(files, capsys):
    out = files / "results"
    rc = main(["scalesim", "-c", str(files / "scale.cfg"), "-t", str(files / "gemm.csv"),
               "-i", "gemm", "-p", str(out)])
    assert rc == 0
    folder = out / "scale_example_run_32x32_ws"
    compute = (folder / "COMPUTE_REPORT.csv").read_text()
    assert compute.startswith(COMPUTE_HEADER)
    assert (folder / "BANDWIDTH_REPORT.csv").read_text().startswith(BANDWIDTH_HEADER)
    assert (folder / "DETAILED_ACCESS_REPORT.csv").read_text().startswith(DETAIL_HEADER)
    lines = compute.splitlines()
    assert lines[1].startswith("0, ") and lines[2].startswith("1, ")
    assert all(line.endswith(",") for line in lines)
    # SCALE-Sim 3.0 prints, for these layers: Total Cycles, Stall, Overall, Mapping, Compute %
    assert [r[2:] for r in _rows(folder / "COMPUTE_REPORT.csv")] == [
        ["379", "0", "21.767810026385224", "62.5", "21.710526315789476"],
        ["1055", "0", "21.382553317535546", "40.283203125", "21.3623046875"]]
    assert [r[1:10] for r in _rows(folder / "DETAILED_ACCESS_REPORT.csv")][0] == [
        "1.0", "349.0", "4224", "1.0", "325.0", "2640", "32.0", "355.0", "2816"]
    assert "2 layers" in capsys.readouterr().out


def test_depthwise_layers_become_one_report_row_per_channel(files):
    layers = scalesim_layers(files / "conv.csv", "conv")
    assert [la.name for la in layers] == ["c1", "dw_DPChannel_0", "dw_DPChannel_1",
                                          "dw_DPChannel_2"]
    assert (layers[1].m, layers[1].n, layers[1].k) == (36, 1, 9)
    # the operator view of the same file: one grouped conv with the same work
    ops = topology_workload(files / "conv.csv", "conv").ops
    assert ops[1].groups == 3 and sum(la.macs for la in layers[1:]) == ops[1].macs
    rc = main(["scalesim", "-c", str(files / "scale.cfg"), "-t", str(files / "conv.csv"),
               "-p", str(files / "r")])
    assert rc == 0
    assert len(_rows(files / "r" / "scale_example_run_32x32_ws" / "COMPUTE_REPORT.csv")) == 4


def test_topology_quirks(tmp_path):
    """Header always skipped; trailing comma optional; an N:M column is ignored; ceil outputs."""
    p = tmp_path / "t.csv"
    p.write_text("name,H,W,R,S,C,K,stride\nodd, 10, 10, 3, 3, 2, 5, 2, 1:1,\n"
                 "nocomma,5,5,1,1,1,1,1\n")
    odd, nocomma = scalesim_layers(p, "conv")
    assert odd.m == 5 * 5           # ceil((10 - 3 + 2) / 2) = 5 (floor would give 4)
    assert odd.input_hw == (10, 10)
    assert (nocomma.m, nocomma.n, nocomma.k) == (25, 1, 1)
    g = tmp_path / "g.csv"
    g.write_text("Layer, M, N, K,\nfc, 7, 9, 11,\n")
    (fc,) = scalesim_layers(g, "gemm")
    assert (fc.m, fc.n, fc.k) == (7, 9, 11)


def test_cfg_becomes_an_accelsim_machine(files):
    cfg = read_scalesim_cfg(files / "scale.cfg")
    m = cfg.machine
    assert (m.array.rows, m.array.cols, m.array.dataflow) == (32, 32, "os")
    assert m.array.operand_bytes == 1
    for nbytes in (m.memory.sram.ifmap_bytes, m.memory.sram.filter_bytes,
                   m.memory.sram.ofmap_bytes):
        assert nbytes == pytest.approx(64 * 1024)
    assert cfg.interface_bandwidth == "CALC" and math.isinf(m.dram_bytes_per_cycle)
    assert cfg.ofmap_dram_words_per_cycle == 32


def test_user_bandwidth_is_the_sum_of_scalesims_three_channels(files):
    p = files / "user.cfg"
    p.write_text(SCALE_CFG.replace("InterfaceBandwidth: CALC", "interfacebandwidth: USER"))
    cfg = read_scalesim_cfg(p)
    assert (cfg.ifmap_dram_words_per_cycle, cfg.filter_dram_words_per_cycle,
            cfg.ofmap_dram_words_per_cycle) == (100, 100, 10)
    assert cfg.machine.dram_bytes_per_cycle == pytest.approx(210)
    assert cfg.machine.dram_latency_cycles == 1


def test_builtin_scalesim_default_matches_scale_cfg(files):
    cfg = read_scalesim_cfg(files / "scale.cfg").machine
    yaml = load_machine("scalesim_default")
    assert (yaml.array.rows, yaml.array.cols, yaml.array.dataflow) == (32, 32, "os")
    assert yaml.array.operand_bytes == cfg.array.operand_bytes == 1
    for part in ("ifmap_bytes", "filter_bytes", "ofmap_bytes"):
        assert getattr(yaml.memory.sram, part) == pytest.approx(getattr(cfg.memory.sram, part))


@pytest.mark.parametrize("old,new,field", [
    ("ArrayHeight:    32", "ArrayHeight: 0", "architecture_presets.ArrayHeight = '0'"),
    ("ArrayWidth:     32", "ArrayWidth: 3.5", "architecture_presets.ArrayWidth = '3.5'"),
    ("Dataflow : os", "Dataflow : xs", "architecture_presets.Dataflow = 'xs'"),
    ("InterfaceBandwidth: CALC", "InterfaceBandwidth: FAST", "run_presets.InterfaceBandwidth"),
    ("IfmapSramSzkB:   64", "IfmapSramSzKb:   -1", "IfmapSramSzkB = '-1'"),
    ("ArrayWidth:     32", "ArrayWidht: 32", "architecture_presets.arraywidht"),
    ("[run_presets]", "[run_preset]", "[run_preset]"),
])
def test_bad_cfg_is_one_line_naming_file_key_and_value(files, capsys, old, new, field):
    bad = files / "bad.cfg"
    bad.write_text(SCALE_CFG.replace(old, new))
    with pytest.raises(ConfigError) as exc:
        read_scalesim_cfg(bad)
    assert str(bad) in str(exc.value) and field in str(exc.value)
    rc = main(["scalesim", "-c", str(bad), "-t", str(files / "gemm.csv"), "-p", str(files)])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and field in err


def test_unmodelled_scalesim_features_are_refused(files):
    bad = files / "sparse.cfg"
    bad.write_text(SCALE_CFG.replace("SparsitySupport : false", "SparsitySupport : true"))
    with pytest.raises(UnsupportedError, match="SparsitySupport"):
        read_scalesim_cfg(bad)


@pytest.mark.parametrize("text,mode,where", [
    ("Layer, M, N, K,\nfc, 7, x, 11,\n", "gemm", "row 2 column 'N' = 'x'"),
    ("Layer, M, N, K,\nfc, 7, 0, 11,\n", "gemm", "row 2 column 'N' = '0'"),
    ("Layer, M, N, K,\nfc, 7, 9, 11,\n", "conv", "row 2"),
    ("name,H,W,R,S,C,K,stride,\nc, 3, 3, 5, 5, 1, 1, 1,\n", "conv", "larger than the input"),
    ("name,H,W,R,S,C,K,stride,\n", "conv", "no layers"),
])
def test_bad_topology_is_one_line_exit_2(files, capsys, text, mode, where):
    topo = files / "bad.csv"
    topo.write_text(text)
    rc = main(["scalesim", "-c", str(files / "scale.cfg"), "-t", str(topo), "-i", mode,
               "-p", str(files)])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert str(topo) in err and where in err


def test_missing_files_and_bad_flags_exit_2_without_traceback(cli, files):
    r = cli("scalesim", "-c", str(files / "nope.cfg"), "-t", str(files / "gemm.csv"))
    assert r.returncode == 2 and "nope.cfg" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = cli("scalesim", "-c", str(files / "scale.cfg"), "-t", str(files / "gemm.csv"), "-i", "mnk")
    assert r.returncode == 2 and "Traceback" not in r.stderr
