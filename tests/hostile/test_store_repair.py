"""``--resume`` keeps every complete row of a damaged results file, whatever the damage.

One test per kind of corruption: a row torn by a kill, a garbage tail without a newline (longer
than any read-back window), garbage lines between rows, NUL and binary bytes, rows of the wrong
width, a torn header; and for Parquet, a damaged file that cannot be read is refused and left
untouched.
"""

from __future__ import annotations

import pytest

from accelsim.errors import ConfigError
from accelsim.sweep.store import ResultStore, read_results

COLUMNS = ["x", "y", "point_id", "error"]


def rows(ids):
    return [{"x": i, "y": 2.0 * i, "point_id": f"p{i}", "error": ""} for i in ids]


def written(tmp_path, n=5):
    path = tmp_path / "r.csv"
    store = ResultStore(path, COLUMNS, min_interval_s=0)
    store.add(rows(range(n)))
    store.close()
    return path


def resumed_ids(path):
    store = ResultStore(path, COLUMNS, resume=True)
    done = set(store.done)
    store.add(rows([100]))
    store.close()
    ids = list(read_results(path)["point_id"])
    assert len(ids) == len(set(ids))
    return done, ids, store.repaired_lines


CORRUPTIONS = {
    "torn_last_row": b"7,14.0,p",
    "garbage_tail_without_newline_over_64_KiB": b"\xde\xad" * 100_000,
    "text_tail_without_newline": b"x" * 200_000,
    "garbage_line_then_more_garbage": b"!!!! not a row !!!!\n\x00\x00\x00",
    "nul_bytes_in_a_line": b"8,16.0,p8\x00,\n",
    "binary_lines": bytes(range(256)) * 4 + b"\n" + bytes(range(10, 200)) + b"\n",
    "row_of_wrong_width": b"1,2,3,4,5,6\n",
    "empty_point_id": b"9,18.0,,\n",
    "unterminated_quote": b'9,18.0,"p9,\n',
}


@pytest.mark.parametrize("tail", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_resume_keeps_every_complete_row(tmp_path, tail):
    path = written(tmp_path)
    with open(path, "ab") as fh:
        fh.write(tail)
    done, ids, dropped = resumed_ids(path)
    assert done == {f"p{i}" for i in range(5)}
    assert ids == [f"p{i}" for i in range(5)] + ["p100"]
    assert dropped >= 1


def test_garbage_between_rows_is_dropped_and_later_rows_are_kept(tmp_path):
    path = written(tmp_path, 3)
    with open(path, "ab") as fh:
        fh.write(b"\x00garbage\xff\n")
        fh.write(b"3,6.0,p3,\n")
    done, ids, dropped = resumed_ids(path)
    assert done == {"p0", "p1", "p2", "p3"}
    assert ids == ["p0", "p1", "p2", "p3", "p100"]
    assert dropped == 1


def test_an_intact_file_is_not_rewritten(tmp_path):
    path = written(tmp_path)
    before = path.stat().st_mtime_ns
    store = ResultStore(path, COLUMNS, resume=True)
    assert store.repaired_lines == 0
    assert path.stat().st_mtime_ns == before
    store.close()


def test_a_torn_header_holds_no_row_and_starts_afresh(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(b"x,y,poi")
    done, ids, _ = resumed_ids(path)
    assert done == set() and ids == ["p100"]


def test_a_file_that_is_not_a_results_file_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    before = path.read_bytes()
    with pytest.raises(ConfigError, match="r.csv"):
        ResultStore(path, COLUMNS, resume=True)
    assert path.read_bytes() == before


@pytest.mark.parametrize("damage", ["truncated", "garbage_appended", "zeroed"])
def test_a_damaged_parquet_file_is_refused_and_left_alone(tmp_path, damage):
    path = tmp_path / "r.parquet"
    store = ResultStore(path, COLUMNS, min_interval_s=0)
    store.add(rows(range(5)))
    store.close()
    data = path.read_bytes()
    damaged = {"truncated": data[: len(data) // 2], "garbage_appended": data + b"\x00junk" * 99,
               "zeroed": bytes(len(data))}[damage]
    path.write_bytes(damaged)
    with pytest.raises(ConfigError) as err:
        ResultStore(path, COLUMNS, resume=True)
    assert "r.parquet" in str(err.value) and "\n" not in str(err.value)
    assert path.read_bytes() == damaged


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_an_interrupt_during_a_flush_never_writes_a_row_twice(tmp_path, monkeypatch, suffix):
    """Ctrl-C while rows are being written: the rows end up in the file exactly once."""
    import os

    path = tmp_path / f"r{suffix}"
    store = ResultStore(path, COLUMNS, min_interval_s=0)
    store.add(rows([0, 1]))
    real_fsync, real_replace = os.fsync, os.replace

    def interrupted(*args):
        monkeypatch.setattr(os, "fsync", real_fsync)
        monkeypatch.setattr(os, "replace", real_replace)
        (real_fsync if len(args) == 1 else real_replace)(*args)
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    monkeypatch.setattr(os, "replace", interrupted)
    store.add(rows([2, 3]))
    with pytest.raises(KeyboardInterrupt):
        store.flush()
    store.close()
    monkeypatch.undo()
    ids = list(read_results(path)["point_id"])
    assert sorted(ids) == ["p0", "p1", "p2", "p3"]
    if suffix == ".csv":
        assert path.read_text().count("\n") == 5
    else:
        import pandas as pd

        assert len(pd.read_parquet(path)) == 4
