"""``accelsim op SYSTEM copy|allreduce|...`` prints one JSON document with time_s and gbps."""

import json

import pytest

from accelsim.cli import op_links
from accelsim.errors import ConfigError


def run(capsys, system, op, *argv):
    assert op_links.run_argv(system, op, list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_copy_json(capsys):
    doc = run(capsys, "h200x2", "copy", "--src", "host", "--dst", "gpu1", "--bytes", "1GiB",
              "--json")
    assert doc["bytes"] == 2**30 and doc["route"] == ["pcie1"]
    assert doc["gbps"] == pytest.approx(2**30 / doc["time_s"] / 1e9)
    assert 50 < doc["gbps"] < 64


def test_pageable_copy_is_slower(capsys):
    args = ("copy", "--src", "host", "--dst", "gpu0", "--bytes", "64MiB", "--json")
    pinned = run(capsys, "h200x2", *args)
    pageable = run(capsys, "h200x2", *args, "--pageable")
    assert pageable["pageable"] and pageable["time_s"] > 2 * pinned["time_s"]


@pytest.mark.parametrize("op", ["allreduce", "allgather", "reducescatter", "alltoall"])
def test_collectives_json(capsys, op):
    doc = run(capsys, "hgx_h200_x8", op, "--bytes", "1e8", "--json")
    assert doc["op"] == op and doc["ranks"] == 8
    assert doc["gbps"] == pytest.approx(1e8 / doc["time_s"] / 1e9)
    assert doc["busbw_gbps"] > 0
    assert doc["algo"] == ("direct" if op == "alltoall" else "ring")


def test_algo_and_ranks(capsys):
    doc = run(capsys, "dgx_a100", "allreduce", "--bytes", "1MiB", "--algo", "tree",
              "--ranks", "gpu0,gpu1,gpu2,gpu3", "--json")
    assert doc["algo"] == "tree" and doc["ranks"] == 4


def test_protocol_can_be_forced_like_nccl_proto(capsys):
    auto = run(capsys, "h200x2", "allreduce", "--bytes", "64KiB", "--json")
    forced = run(capsys, "h200x2", "allreduce", "--bytes", "64KiB", "--protocol", "Simple",
                 "--json")
    assert auto["protocol"] == "LL" and forced["protocol"] == "Simple"
    assert forced["time_s"] > auto["time_s"]


def test_text_summary(capsys):
    assert op_links.run_argv("h200x2", "copy",
                             ["--src", "gpu0", "--dst", "gpu1", "--bytes", "1e9"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("h200x2 copy gpu0->gpu1") and "via nvl0+nvl1" in out


@pytest.mark.parametrize("op, argv, match", [
    ("copy", ["--src", "host", "--dst", "gpu9", "--bytes", "1"], "gpu9"),
    ("copy", ["--src", "host", "--bytes", "1"], "--dst"),
    ("copy", ["--src", "host", "--dst", "gpu0", "--bytes", "-4"], "bytes"),
    ("allreduce", ["--bytes", "1", "--src", "host"], "collective"),
    ("allreduce", ["--bytes", "1", "--algo", "mesh"], "mesh"),
    ("allreduce", ["--bytes", "1", "--protocol", "LL64"], "LL64"),
    ("copy", ["--src", "host", "--dst", "gpu0", "--bytes", "1", "--protocol", "LL"], "protocol"),
    ("broadcast", ["--bytes", "1"], "broadcast"),
    ("copy", ["--src", "host", "--dst", "gpu0", "--bytes", "lots"], "lots"),
])
def test_bad_input_is_a_one_line_error(op, argv, match):
    with pytest.raises(ConfigError, match=match):
        op_links.run_argv("h200x2", op, argv)


def test_through_the_accelsim_command(cli):
    """``accelsim op`` hands machines of kind ``system`` to this module."""
    r = cli("op", "dgx_a100", "alltoall", "--bytes", "64MiB", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["algo"] == "direct" and doc["time_s"] > 0 and doc["gbps"] > 0
    # bad input: one line, exit 2, nothing on stdout
    r = cli("op", "h200x2", "copy", "--src", "host", "--dst", "gpu5", "--bytes", "1", "--json")
    assert r.returncode == 2 and r.stdout == ""
    assert "gpu5" in r.stderr and len(r.stderr.strip().splitlines()) == 1
