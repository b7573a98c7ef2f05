"""The results store: one row per point_id, atomic Parquet rewrites, CSV appends, safe resume."""

from __future__ import annotations

import pandas as pd
import pytest

from accelsim.errors import ConfigError
from accelsim.sweep.store import ResultStore, read_results

COLUMNS = ["x", "y", "point_id", "error"]


def rows(ids):
    return [{"x": i, "y": 2.0 * i, "point_id": f"p{i}", "error": ""} for i in ids]


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_rows_are_appended_and_kept_unique(tmp_path, suffix):
    path = tmp_path / f"r{suffix}"
    store = ResultStore(path, COLUMNS, min_interval_s=0)
    assert store.add(rows([0, 1, 2])) == 3
    assert store.add(rows([2, 3])) == 1  # p2 is already there
    store.close()
    df = read_results(path)
    assert list(df["point_id"]) == ["p0", "p1", "p2", "p3"]
    assert list(df.columns) == COLUMNS


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_resume_skips_finished_points(tmp_path, suffix):
    path = tmp_path / f"r{suffix}"
    store = ResultStore(path, COLUMNS)
    store.add(rows([0, 1]))
    store.close()
    again = ResultStore(path, COLUMNS, resume=True)
    assert again.done == {"p0", "p1"}
    assert again.add(rows([1, 2])) == 1
    again.close()
    assert list(read_results(path)["point_id"]) == ["p0", "p1", "p2"]


def test_an_existing_file_needs_resume_or_force(tmp_path):
    path = tmp_path / "r.parquet"
    s = ResultStore(path, COLUMNS)
    s.add(rows([0]))
    s.close()
    with pytest.raises(ConfigError, match="already exists; pass --resume"):
        ResultStore(path, COLUMNS)
    ResultStore(path, COLUMNS, force=True).close()
    assert not path.exists()  # replaced, and nothing written yet


def test_resume_refuses_a_file_of_another_sweep(tmp_path):
    path = tmp_path / "r.csv"
    s = ResultStore(path, COLUMNS)
    s.add(rows([0]))
    s.close()
    with pytest.raises(ConfigError, match="other parameters or metrics"):
        ResultStore(path, ["x", "z", "point_id", "error"], resume=True)


def test_an_interrupted_parquet_write_leaves_the_previous_file(tmp_path, monkeypatch):
    """Ctrl-C while the file is being rewritten: the old complete file stays, no temp file."""
    path = tmp_path / "r.parquet"
    store = ResultStore(path, COLUMNS)
    store.add(rows([0, 1]))
    store.flush()

    def interrupted(self, target, *a, **k):
        with open(target, "wb") as fh:
            fh.write(b"PAR1 half a file")
        raise KeyboardInterrupt

    monkeypatch.setattr(pd.DataFrame, "to_parquet", interrupted)
    store.add(rows([2, 3]))
    with pytest.raises(KeyboardInterrupt):
        store.flush()
    monkeypatch.undo()
    assert list(read_results(path)["point_id"]) == ["p0", "p1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".r.parquet.lock", "r.parquet"]
    store._lock.release()  # the store is still open (held by this test): no temp file beside it
    assert [p.name for p in tmp_path.iterdir()] == ["r.parquet"]


def test_a_torn_csv_row_is_cut_on_resume(tmp_path):
    """A hard kill in the middle of a CSV append leaves a partial last line; resume drops it."""
    path = tmp_path / "r.csv"
    s = ResultStore(path, COLUMNS)
    s.add(rows([0, 1]))
    s.close()
    with open(path, "a") as fh:
        fh.write("2,4.0,p")
    again = ResultStore(path, COLUMNS, resume=True)
    assert again.done == {"p0", "p1"}
    again.add(rows([2]))
    again.close()
    df = read_results(path)
    assert list(df["point_id"]) == ["p0", "p1", "p2"]
    assert df["y"].tolist() == [0.0, 2.0, 4.0]


def test_csv_keys_that_look_like_numbers_stay_text(tmp_path):
    path = tmp_path / "r.csv"
    store = ResultStore(path, COLUMNS)
    store.add([{"x": 1, "y": 2.0, "point_id": "0123456e78901234", "error": ""},
               {"x": 2, "y": 3.0, "point_id": "0000000000000001", "error": ""}])
    store.close()
    assert list(read_results(path)["point_id"]) == ["0123456e78901234", "0000000000000001"]
    assert ResultStore(path, COLUMNS, resume=True).done == {"0123456e78901234", "0000000000000001"}
