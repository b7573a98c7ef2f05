"""Terminal tables: one scaled unit and one number format per column; blanks mean n/a."""

import math

import numpy as np
import pandas as pd

from accelsim.cli.run_table import SYSTOLIC_COLUMNS, layer_tables, systolic_view
from accelsim.report.terminal import Col, choose_scale, scaled, unit_table


def test_unit_is_chosen_per_column_from_its_typical_value():
    assert choose_scale("s", np.array([5e-6, 8e-6, 3e-3])) == (1e-6, "µs")
    assert choose_scale("bytes", np.array([2e7, 3e7])) == (1e6, "MB")
    assert choose_scale("pj", np.array([8.9e11])) == (1e9, "mJ")
    assert choose_scale("j", np.array([2.0])) == (1.0, "J")


def test_one_format_per_column_and_unit_in_the_header():
    df = pd.DataFrame({"t": [5.3e-7, 1.18e-4, 3.7e-3], "b": [16384.0, 3.3e7, 1.05e9]})
    text = unit_table(df, [Col("t", "time", "s"), Col("b", "DRAM", "bytes")])
    head, rule, *rows = text.splitlines()
    assert "time (µs)" in head and "DRAM (MB)" in head
    decimals = {len(r.split()[0].partition(".")[2]) for r in rows}
    assert len(decimals) == 1  # every value of the column printed the same way
    assert "e+" not in text and "e-" not in text


def test_missing_values_print_blank():
    df = pd.DataFrame({"m": [4.0, math.nan, 8.0], "u": [0.25, math.nan, 0.5]})
    rows = unit_table(df, [Col("m", "m", "int"), Col("u", "util", "fraction")]).splitlines()[2:]
    assert rows[0].split() == ["4", "25.0"]
    assert rows[1].strip() == ""
    assert rows[2].split() == ["8", "50.0"]


def test_scaled_single_values():
    assert scaled(0.05397, "s") == "53.97 ms"
    assert scaled(1.531e10, "bytes") == "15.31 GB"
    assert scaled(8.929e11, "pj") == "892.9 mJ"


def _layers(n: int) -> pd.DataFrame:
    rows = []
    for i in range(n):
        vector = i % 2 == 1
        rows.append({"layer": f"l{i}", "op": "softmax" if vector else "gemm", "repeat": 1,
                     "m": 0 if vector else 64, "n": 0 if vector else 64, "k": 0 if vector else 64,
                     "dataflow": "vector" if vector else "ws", "folds": 1,
                     "total_cycles": 100 + i, "stall_cycles": 0, "time_s": (100 + i) * 1e-9,
                     "overall_util": 0.0 if vector else 0.5,
                     "mapping_efficiency": 0.0 if vector else 1.0,
                     "sram_reads": 0 if vector else 4096, "sram_writes": 0 if vector else 64,
                     "dram_bytes": 1000.0})
    return pd.DataFrame(rows)


def test_vector_ops_have_blank_shape_and_utilisation():
    text = layer_tables(systolic_view(_layers(2)), SYSTOLIC_COLUMNS, None, 40, 15)[0]
    vector_row = text.splitlines()[3]
    assert vector_row.split()[:4] == ["l1", "softmax", "1", "vector"]
    assert " 0.0 " not in vector_row


def test_long_models_get_a_summary_and_the_slowest_layers():
    blocks = layer_tables(systolic_view(_layers(100)), SYSTOLIC_COLUMNS, None, 40, 15)
    text = "\n".join(blocks)
    assert "100 layers, by op:" in text and "the 15 slowest of 100 kinds of layer" in text
    assert len(text.splitlines()) < 30
    assert "l99" in text and "l0 " not in text  # the slowest, not the first


def test_layers_differing_only_in_block_number_are_one_kind():
    df = _layers(4)
    df["layer"] = ["blocks.0.fc", "blocks.0.act", "blocks.1.fc", "blocks.1.act"]
    text = "\n".join(layer_tables(systolic_view(df), SYSTOLIC_COLUMNS, 1, 40, 15))
    row = text.splitlines()[-1].split()
    assert row[:3] == ["blocks.*.act", "2", "50.2"]  # two layers, (101 + 103) / 406 of the time
    every = layer_tables(systolic_view(_layers(100)), SYSTOLIC_COLUMNS, 0, 40, 15)
    assert len(every[0].splitlines()) == 2 + 100


def _long(n: int = 6) -> pd.DataFrame:
    return pd.DataFrame({"layer": [f"model.block.{i}.attention.output.dense.projection_{i}"
                                   for i in range(n)],
                         "op": ["gemm"] * n, "a": np.arange(n) * 1e6, "b": np.arange(n) * 2e6,
                         "c": np.arange(n) * 3e6, "d": np.arange(n) * 4e6})


def test_a_fitted_table_drops_the_least_relevant_columns_first():
    from accelsim.cli.run_table import fitted_table

    cols = [Col("layer", "layer"), Col("op", "op"),
            *(Col(x, f"a rather long header {x}", "count") for x in "abcd")]
    full = unit_table(_long(), cols)
    assert max(map(len, full.splitlines())) > 120
    text = fitted_table(_long(), cols, ["layer", "op", "a", "b", "c", "d"], width=120)
    head = text.splitlines()[0]
    assert max(map(len, text.splitlines())) <= 120
    assert "header a" in head and "header d" not in head        # d is the least relevant
    assert "…" in text                                           # long names cut in the middle
    assert fitted_table(_long(), cols, None) == full             # no relevance: as is (--wide)


def test_short_names_keep_both_ends():
    from accelsim.cli.run_table import short_name

    name = "model.layers.17.self_attention.query_key_value.weight_projection"
    short = short_name(name, 30)
    head, tail = short.split("…")
    assert len(short) == 30 and name.startswith(head) and name.endswith(tail)
    assert abs(len(head) - len(tail)) <= 1                      # cut in the middle
    assert short_name("fc", 30) == "fc"


def test_prose_wraps_after_commas_and_keeps_clauses_whole():
    from accelsim.report.terminal import wrap_clauses

    text = ("total: 16.5 ms, 7.803 TFLOP/s, DRAM 17.19 GB, energy 2.77 J (167.8 W average), "
            "484.7 tokens/s, 16.5 ms per output token")
    lines = wrap_clauses(text, 60)
    assert all(len(line) <= 60 for line in lines) and len(lines) > 1
    assert any(line.strip() == "16.5 ms per output token"
               or line.endswith("16.5 ms per output token") for line in lines)
    assert " ".join(line.strip() for line in lines) == text
