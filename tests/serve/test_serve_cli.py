"""``accelsim serve`` and ``accelsim run --tp`` from the command line."""

from __future__ import annotations

import json

from accelsim.cli import main


def test_serve_prints_the_figures(capsys, tmp_path):
    rc = main(["serve", "h200", "gpt2_small", "--isl", "100", "--osl", "10", "--requests", "20",
               "--out", str(tmp_path), "--plot", str(tmp_path / "t.png"),
               "--perfetto", str(tmp_path / "p.json")])
    out = capsys.readouterr().out
    assert rc == 0
    assert "output tok/s" in out and "TTFT" in out and "TPOT" in out
    assert max(len(line) for line in out.splitlines()) <= 120
    assert (tmp_path / "requests.csv").read_text().count("\n") == 21
    assert json.loads((tmp_path / "p.json").read_text())["traceEvents"]
    assert (tmp_path / "t.png").stat().st_size > 0


def test_serve_json(capsys):
    assert main(["serve", "h200", "gpt2_small", "--isl", "50", "--osl", "5", "--requests", "4",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["finished"] == 4 and doc["settings"]["tp"] == 1


def test_bad_serving_input_is_one_line(capsys, tmp_path):
    bad = tmp_path / "t.csv"
    bad.write_text("arrival_s,input_tokens\n0,4\n")
    for argv in (["serve", "h200", "llama3_70b", "--tp", "3"],
                 ["serve", "h200", "llama3_70b", "--tp", "8", "--replicas", "2"],
                 ["serve", "h200", "gpt2_small", "--trace", str(bad)],
                 ["serve", "h200", "gpt2_small", "--rate", "-1"],
                 ["serve", "h200", "gpt2_small", "--engine", "nope"],
                 ["serve", "h200", "bert_base"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("accelsim: error:") and err.count("\n") == 1, (argv, err)


def test_run_across_gpus(capsys, tmp_path):
    assert main(["run", "h200", "llama3_8b_decode:batch=4,context=512", "--tp", "2",
                 "--exec", "serving", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "tp=2" in out and "collectives" in out
    assert list(tmp_path.glob("*-tp2-pp1-layers.csv"))
    assert main(["run", "hgx_h200_x8", "llama3_8b_decode:batch=4,context=512", "--pp", "2",
                 "--exec", "graph", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["pp"] == 2 and len(doc["stages"]) == 2
    assert doc["totals"]["time_s"] > doc["totals"]["pipeline_interval_s"]
    for argv in (["run", "tpu_v4", "llama3_8b_decode", "--tp", "2"],
                 ["run", "h200", "llama3_70b_decode", "--tp", "5"],
                 ["run", "h200", "resnet50", "--tp", "2"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("accelsim: error:") and err.count("\n") == 1, (argv, err)
