"""Names are data, never paths; text from files is escaped before a terminal, an HTML page, a
CSV cell or a plot sees it (``accelsim/safe_text.py``); every output write is checked and a
failure is one line naming the path (``accelsim/files.py`` ``writing``)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pandas as pd
import pytest

from accelsim.errors import AccelsimError, ConfigError
from accelsim.files import write_output, writing
from accelsim.safe_text import (
    MAX_NAME_CHARS,
    NAME_CHARS,
    EscapingStream,
    csv_text,
    html_text,
    inert_csv_columns,
    plot_text,
    safe_name,
    show,
)

HOSTILE = ["../../etc/passwd", "/abs/path", "..\\..\\win", ".", "..", "", ".hidden", "-rf",
           "a/b", "esc\x1b[2J", "nul-free\x07bell", "L" * 5000, "模型-é-\u202e", "\udcff",
           "=cmd|' /C calc'!A0", "con", " spaced name "]


@pytest.mark.parametrize("name", ["tpu_v4", "resnet50_convs", "h200x2", "os", "a.b-c_9"])
def test_a_plain_name_is_its_own_file_name(name):
    assert safe_name(name) == name


@pytest.mark.parametrize("name", HOSTILE)
def test_any_name_becomes_one_bounded_file_name_component(name, tmp_path):
    s = safe_name(name)
    assert s and set(s) <= NAME_CHARS
    assert len(s) <= MAX_NAME_CHARS
    assert not s.startswith((".", "-"))
    assert s not in (".", "..")
    assert (tmp_path / s).resolve().parent == tmp_path.resolve()


def test_names_that_differ_give_different_file_names():
    names = ["a/b", "a\\b", "a b", "a_b\x1b", "L" * 5000, "L" * 4999, "..", "."]
    assert len({safe_name(n) for n in names}) == len(names)
    assert safe_name("a/b") == safe_name("a/b")  # and the same name the same file, every time


@pytest.mark.parametrize("text,shown", [
    ("esc\x1b[2J", "esc\\x1b[2J"), ("bell\x07", "bell\\x07"), ("c1\x9b31m", "c1\\x9b31m"),
    ("del\x7f", "del\\x7f"), ("two\nlines", "two\\nlines"), ("bidi\u202eabc", "bidi\\u202eabc"),
    ("plain é 模型 🙂", "plain é 模型 🙂"), ("lone\udcff", "lone\\udcff")])
def test_show_escapes_control_format_and_separator_characters(text, shown):
    assert show(text) == shown
    assert show(text).isprintable()


def test_show_can_keep_line_breaks_of_multi_line_text():
    assert show("a\nb\x1b", keep="\n") == "a\nb\\x1b"


def test_html_text_escapes_markup_and_controls():
    assert html_text('<script>alert("x")</script>\x1b') == (
        "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;\\x1b")


@pytest.mark.parametrize("text", ["=SUM(A1:A9)", "+1", "-1+2", "@cmd", "=HYPERLINK(\"x\")"])
def test_a_csv_text_cell_that_a_spreadsheet_would_run_is_made_inert(text):
    assert csv_text(text) == "'" + text


def test_only_name_columns_of_a_table_are_made_inert_and_numbers_stay_numbers():
    df = pd.DataFrame({"layer": ["=evil", "-minus", "ok", "esc\x1b"],
                       "operand": ["-", "-", "a", "b"],
                       "value": [-1.5, -2.0, 3.0, 4.0]})
    out = inert_csv_columns(df)
    assert list(out["layer"]) == ["'=evil", "'-minus", "ok", "esc\\x1b"]
    assert list(out["operand"]) == ["-", "-", "a", "b"]
    assert out["value"].tolist() == [-1.5, -2.0, 3.0, 4.0]
    assert list(df["layer"])[0] == "=evil"  # the caller's table is not changed
    back = pd.read_csv(io.StringIO(out.to_csv(index=False)))
    assert back["value"].dtype.kind == "f" and back["value"].iloc[0] == -1.5


def test_plot_text_is_bounded_and_never_mathtext():
    assert plot_text("$\\frac$") == "\\$\\frac\\$"
    assert len(plot_text("L" * 5000)) <= 100


def test_the_escaping_stream_never_passes_an_escape_byte():
    buf = io.StringIO()
    stream = EscapingStream(buf)
    print("name\x1b[2J", "\r[1/2] progress\t", file=stream)
    assert "\x1b" not in buf.getvalue()
    assert buf.getvalue() == "name\\x1b[2J \r[1/2] progress\t\n"
    assert stream.isatty() is False


def test_an_error_message_shows_control_characters_as_escapes():
    msg = str(ConfigError("m\x1b.yaml", "name\x1b", "v\x1b", "bad \x1b[2J name"))
    assert "\x1b" not in msg and "\\x1b" in msg


def test_a_write_is_checked_and_reports_the_path_and_the_reason(tmp_path):
    assert write_output(tmp_path / "sub" / "a.txt", "x").read_text() == "x"
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(AccelsimError,
                       match=r"^cannot write .*file/x\.csv: (Not a directory|File exists)$"):
        write_output(blocker / "x.csv", "x")
    with pytest.raises(AccelsimError, match=r"^cannot write .*: \S"):
        with writing(tmp_path / "y.bin") as p:
            raise OSError(28, "No space left on device", str(p))


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_is_one_line_naming_the_path_even_when_only_the_close_fails():
    with pytest.raises(AccelsimError) as err:
        write_output("/dev/full", "x" * 10)  # buffered: the error comes at flush/close
    assert str(err.value) == "cannot write /dev/full: No space left on device"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("argv", [
    ["energy", "scalesim_default", "alexnet", "--plot", "/dev/full"],
    ["roofline", "scalesim_default", "alexnet", "--plot", "/dev/full"],
    ["run", "scalesim_default", "alexnet", "--mode", "analytic", "--out", "{t}", "--trace",
     "/dev/full"],
    ["run", "scalesim_default", "alexnet", "--mode", "analytic", "--out", "{t}", "--report",
     "/dev/full"],
    ["run", "h200", "alexnet", "--out", "{t}", "--trace", "/dev/full"],
    ["run", "scalesim_default", "alexnet", "--mode", "analytic", "--out", "/dev/full/x"],
])
def test_a_failed_output_is_one_line_exit_2_never_a_success(argv, tmp_path, capsys):
    from accelsim.cli import main

    rc = main([a.replace("{t}", str(tmp_path)) for a in argv])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2
    assert len(lines) == 1 and lines[0].startswith("accelsim: error: cannot write /dev/full"), err
    assert not lines[0].rstrip().endswith(":")
    assert "wrote" not in err


def test_an_unknown_plot_format_is_one_line(tmp_path, capsys):
    from accelsim.cli import main

    rc = main(["energy", "scalesim_default", "alexnet", "--plot", str(tmp_path / "e.xyz")])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith(f"accelsim: error: cannot write {tmp_path / 'e.xyz'}: ")
    assert not os.path.exists(tmp_path / "e.xyz")
