"""``accelsim compare``: an aligned table, a JSON document, one-line errors with exit 2."""

import json


def test_compare_prints_a_table_of_every_kernel_on_every_platform(cli):
    r = cli("compare", "--hw", "a100,tpu_v4,npu_ascend910,spr_cpu")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "7 kernels x 4 platforms" in lines[0]
    assert lines[1].split()[:3] == ["kernel", "hw", "prec"]
    body = [line for line in lines[3:] if not line.startswith("! ")]
    assert len(body) == 28
    assert sum("spr_cpu" in line for line in body) == 7
    flagged = [line for line in lines[3:] if line.startswith("! ")]  # implausible GFLOP/J
    assert len(flagged) == sum(line.split()[8].endswith("!") for line in body)
    assert all("implausible" in line for line in flagged)


def test_compare_json_is_one_document(cli_in_process):
    r = cli_in_process("compare", "workloads/kernels/multikernelbench.yaml", "--hw", "h100,spr_cpu",
                       "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["hw"] == ["h100", "spr_cpu"]
    assert {row["kernel"] for row in doc["rows"]} >= {"matmul", "conv3x3", "layernorm",
                                                     "softmax", "attention"}


def test_unknown_hw_is_one_line_exit_2(cli_in_process):
    r = cli_in_process("compare", "--hw", "a100,tpu_v9")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "tpu_v9" in r.stderr and "Traceback" not in r.stderr


def test_the_issues_command_with_aliases_shows_alias_and_config(cli_in_process):
    r = cli_in_process("compare", "workloads/kernels/multikernelbench.yaml",
                       "--hw", "a100,h100,tpu_v4,npu,cpu")
    assert r.returncode == 0, r.stderr
    body = [line for line in r.stdout.splitlines()[3:] if not line.startswith("! ")]
    assert len(body) == 35
    npu = [line for line in body if "npu=npu_ascend910" in line]
    assert len(npu) == 7 and all("bf16->fp16" in line for line in npu)
    assert sum("cpu=spr_cpu" in line for line in body) == 7


def test_v100_runs_the_bf16_suite_at_fp16(cli_in_process):
    r = cli_in_process("compare", "--hw", "v100", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["rows"]
    assert len(rows) == 7
    assert {(x["requested_precision"], x["precision"]) for x in rows} == {("bf16", "fp16")}


def test_a_datasheet_only_machine_is_marked_unvalidated_in_table_and_json(cli_in_process):
    r = cli_in_process("compare", "--hw", "h200,tpu_v5e")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    body = [line for line in lines[3:] if not line.startswith(("! ", "* "))]
    assert body and all(("tpu_v5e*" in line) != ("h200" in line.split()[1]) for line in body)
    assert [line for line in lines if line.startswith("* ")] == [
        "* tpu_v5e: unvalidated (datasheet values only, no measurement compared)"]
    doc = json.loads(cli_in_process("compare", "--hw", "h200,tpu_v5e", "--json").stdout)
    assert {row["hw"]: row["validation"] for row in doc["rows"]} == {"h200": "",
                                                                       "tpu_v5e": "unvalidated"}
