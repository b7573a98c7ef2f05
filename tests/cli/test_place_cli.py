"""``accelsim place``: a per-device table, transfers and the makespan; JSON; one-line errors."""

import json


def test_place_reports_devices_transfers_and_makespan(cli):
    r = cli("place", "node_gpu_npu", "resnet50", "--policy", "pinned", "--pin", "layer4*=npu0")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "policy pinned, pins layer4*=npu0" in out
    for word in ("gpu0", "npu0", "host", "busy_ms", "idle_ms", "gpu0->npu0", "makespan:"):
        assert word in out


def test_place_json_has_every_op_once(cli_in_process):
    r = cli_in_process("place", "node_gpu_npu", "resnet50", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["policy"] == "greedy"
    assert len(doc["ops"]) == len({o["op"] for o in doc["ops"]}) > 100
    busy = sum(d["busy_s"] for d in doc["devices"])
    assert doc["makespan_s"] <= busy + sum(t["time_s"] for t in doc["transfers"]) + 1e-9
    assert set(doc["single_device_s"]) == {"gpu0", "npu0", "host"}


def test_bad_inputs_are_one_line_exit_2(cli_in_process):
    """In-process (a real process: test_unknown_model_error_says_what_place_accepts)."""
    for args in (("place", "node_gpu_npu", "resnet50", "--pin", "fc=tpu0"),
                 ("place", "tpu_v4", "resnet50"),
                 ("place", "node_gpu_npu", "resnet5000")):
        r = cli_in_process(*args)
        assert r.returncode == 2, args
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_place_accepts_a_workload_name_or_yaml_path(cli_in_process):
    r = cli_in_process("place", "node_gpu_npu", "alexnet")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("alexnet (8 ops) on node_gpu_npu")
    r = cli_in_process("place", "node_gpu_npu", "workloads/kernels/multikernelbench.yaml", "--json")
    assert r.returncode == 0, r.stderr
    assert [o["op"] for o in json.loads(r.stdout)["ops"]][:2] == ["matmul", "matmul_ffn"]


def test_unknown_model_error_says_what_place_accepts(cli_in_process):
    r = cli_in_process("place", "node_gpu_npu", "nosuch.yaml")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "zoo model spec, a workload YAML/CSV path or a built-in workload name" in r.stderr
