"""Machines by inheritance, with the provenance of every value (accelsim/config/inherit.py).

A machine file may say ``inherit: h200`` and give only what differs; every value carries its
kind (datasheet, measured on X, fitted on X, estimated; inherited from the parent that writes
it). A missing key is an error, never a code default, and every value a file says was
measured or fitted on another machine is that machine's value.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from accelsim.cli import main
from accelsim.config.build import resolve_machine
from accelsim.config.gpu import GpuCompute, GpuHost, GpuMemory
from accelsim.config.gpu_conv import GpuConvKernels
from accelsim.config.gpu_stack import load_stack
from accelsim.config.inherit import get_path, leaves
from accelsim.config.registry import load_machine
from accelsim.files import builtin_names, read_yaml

GPUS = [n for n in builtin_names("hardware") if read_yaml(resolve_machine(n).file).get("kind")
        == "gpu" or resolve_machine(n).data.get("kind") == "gpu"]


def _source_value(machine: str, path: str):
    """The value at ``path`` of built-in ``machine`` (a GPU) or of stack ``machine`` (for a
    ``stack.*`` path whose provenance names a stack)."""
    if machine in builtin_names("hardware"):
        return get_path(resolve_machine(machine).data, path)
    data, _ = load_stack(machine)
    return get_path(data, path.removeprefix("stack."))


def test_the_builtin_gpus_are_found():
    assert {"h200", "h100", "a100", "v100"} <= set(GPUS)


@pytest.mark.parametrize("name", GPUS)
def test_every_inherited_or_fitted_or_measured_value_equals_its_source(name):
    """An inherited value is its parent's; a value 'fitted on X' or 'measured on X' is X's
    value at the same field, whoever writes it (a stale copy of a fit is refused)."""
    res = resolve_machine(name)
    checked = 0
    for path, prov in res.provenance.items():
        value = get_path(res.data, path)
        if prov.inherited_from:
            assert _source_value(prov.inherited_from, path) == value, (name, path)
            checked += 1
        src = prov.source_machine
        if src and src != name and not path.startswith("stack."):
            assert _source_value(src, path) == value, (name, path, prov.label())
            checked += 1
    if res.chain[1:]:
        assert checked > 0


@pytest.mark.parametrize("name", GPUS)
def test_every_gpu_value_has_a_provenance_kind(name):
    res = resolve_machine(name)
    values = [p for p, _ in leaves(res.data) if p.split(".")[0] not in
              ("kind", "name", "description", "sources")
              and not p.startswith(("stack.kind", "stack.name", "stack.description",
                                    "stack.sources"))]
    assert values and all(p in res.provenance for p in values)
    assert all(res.provenance[p].kind != "unstated" for p in values)


@pytest.mark.parametrize("cls", [GpuCompute, GpuMemory, GpuHost, GpuConvKernels])
def test_no_gpu_parameter_has_a_code_default(cls):
    """A GPU's chip, memory, host and conv constants come from its YAML (or its parent's):
    a key the file lacks is an error, never a silent default."""
    defaulted = [f.name for f in dataclasses.fields(cls)
                 if f.default is not dataclasses.MISSING
                 or f.default_factory is not dataclasses.MISSING]
    assert defaulted == []


def test_a_missing_gpu_key_is_an_error_naming_it(tmp_path):
    data = dict(resolve_machine("h200").data)
    data["host"] = {k: v for k, v in data["host"].items() if k != "sync_s"}
    from accelsim.config.registry import machine_from_dict
    from accelsim.errors import ConfigError

    with pytest.raises(ConfigError, match="host.sync_s.*missing required field"):
        machine_from_dict(data, file="x.yaml")


def test_siblings_share_the_h200_host_so_a_host_bound_decode_takes_as_long():
    """GPT-2 small eager decode at batch 1 is host-bound: with the same host (inherited), the
    H100 takes the H200's time (it took 4.9 ms against 2.7 ms when code defaults filled the
    H100's missing host keys)."""
    from accelsim.api.model_run import run_model

    h200 = run_model("h200", "gpt2_small_decode:batch=1", exec_mode="eager")
    h100 = run_model("h100", "gpt2_small_decode:batch=1", exec_mode="eager")
    assert load_machine("h100").host == load_machine("h200").host
    assert h100.totals["time_s"] == pytest.approx(h200.totals["time_s"], rel=0.02)


PRICED_ELSEWHERE = {"collective"}
"""Call classes whose host cost is not the GPU's (a collective's is the system's
``collectives.issue_s``, configs/lowering/eager.yaml)."""


def test_every_lowering_call_class_is_priced_by_every_gpu():
    """A call class the lowering tables name and a GPU's host lacks would fall back to
    host_launch_s; every built-in GPU prices every class itself."""
    from accelsim.files import config_dir

    classes = set()
    for f in sorted(config_dir("lowering").glob("*.yaml")):
        table = read_yaml(f)
        for key in ("per_call_extra", "step_call"):
            if isinstance(table.get(key), str):
                classes.add(table[key])
        for calls in (table.get("ops") or {}).values():
            for call in calls if isinstance(calls, list) else []:
                if isinstance(call, dict) and isinstance(call.get("call"), str):
                    classes.add(call["call"])
    assert classes
    classes -= PRICED_ELSEWHERE
    for name in GPUS:
        missing = classes - set(load_machine(name).host.eager_call_s)
        assert not missing, (name, sorted(missing))


def test_a_child_names_only_what_differs_and_the_rest_is_inherited():
    res = resolve_machine("h100")
    assert res.chain == ("h100", "h200")
    assert res.provenance["memory.l2_bytes"].label() == "datasheet"
    assert res.provenance["compute.mma_efficiency"].label() == "fitted on h200, inherited from h200"
    assert get_path(res.data, "compute.mma_efficiency") == get_path(
        resolve_machine("h200").data, "compute.mma_efficiency")


# --- bad input: one line naming file, field and value, exit 2 ----------------------------

def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / f"{name}.yaml"
    p.write_text(text)
    return p


def _refused(capsys, path: Path, *needles: str) -> str:
    rc = main(["show", str(path)])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1, err
    for n in needles:
        assert n in err, (n, err)
    return err


def test_an_inheritance_loop_is_refused(tmp_path, capsys):
    _write(tmp_path, "a", "kind: gpu\ninherit: b.yaml\nname: a\n")
    b = _write(tmp_path, "b", "kind: gpu\ninherit: a.yaml\nname: b\n")
    _refused(capsys, b, "b.yaml", "inherit", "inheritance loop", "b -> a -> b")


H200_CHILD = "kind: gpu\ninherit: h200\nname: x\n"


@pytest.mark.parametrize("text, needles", [
    # an override of a key the parent lacks
    (H200_CHILD + "compute:\n  sm_cont: 100\nprovenance: {default: datasheet}\n",
     ("compute.sm_cont", "100", "h200 lacks")),
    # a precision the chip lacks: fp8 tensor cores dropped, the fp8 clock under load kept
    (H200_CHILD + "remove: [compute.tensor_flop_per_clk_per_sm.fp8]\n",
     ("compute.clock_under_load_hz.fp8", "1380 MHz", "precision the chip lacks")),
    # a stack that does not match the architecture
    (H200_CHILD + "stack: ampere\nprovenance: {default: datasheet}\n",
     ("stack", "ampere", "chip is hopper")),
    # a precision the stack has no kernels for
    ("kind: gpu\ninherit: a100\nname: x\ncompute: {tensor_flop_per_clk_per_sm: {int8: 4096}}\n"
     "stack: volta\narchitecture: volta\nprovenance: {default: datasheet}\n",
     ("compute.tensor_flop_per_clk_per_sm", "no", "GEMM kernels")),
    # malformed provenance and inheritance
    (H200_CHILD + "provenance: {default: guessed}\ncompute: {sm_count: 100}\n",
     ("provenance.default", "guessed", "measured on X")),
    (H200_CHILD + "provenance: {default: datasheet, memory.l2_bytes: estimated}\n"
     "compute: {sm_count: 100}\n",
     ("provenance.memory.l2_bytes", "names no value this file writes")),
    (H200_CHILD + "compute: {sm_count: 100}\n", ("compute.sm_count", "100", "no provenance")),
    (H200_CHILD + "remove: [compute.nothing]\n", ("remove", "compute.nothing", "no such key")),
    ("inherit: h200\nname: x\nkind: systolic\n", ("kind", "systolic", "cannot change the kind")),
    ("kind: gpu\ninherit: no_such_machine\nname: x\n",
     ("inherit", "no_such_machine", "no such file")),
])
def test_bad_input_is_refused_in_one_line(tmp_path, capsys, text, needles):
    _refused(capsys, _write(tmp_path, "x", text), "x.yaml", *needles)


# --- a new GPU of an existing generation is one YAML file ---------------------------------

def test_a_new_gpu_of_an_existing_generation_is_one_yaml_file(tmp_path):
    """An H100 PCIe-like part: fewer SMs, a lower clock, PCIe-board HBM; chip fits, stack and
    host from its parent."""
    p = _write(tmp_path, "h100_pcie", "kind: gpu\ninherit: h100\nname: h100_pcie\n"
               "compute: {sm_count: 114, clock_hz: 1620 MHz}\n"
               "memory: {hbm: {bandwidth_bytes_per_s: 2.0 TB/s}}\n"
               "provenance: {default: datasheet}\n")
    m = load_machine(str(p))
    h100 = load_machine("h100")
    assert m.sm_count == 114 and m.stack == h100.stack and m.host == h100.host
    assert m.peak_flops("bf16") < h100.peak_flops("bf16")
    res = resolve_machine(str(p))
    assert res.chain == ("h100_pcie", "h100", "h200")
    assert res.provenance["compute.sm_count"].label() == "datasheet"
    assert res.provenance["host.launch_s"].inherited_from == "h200"


# --- accelsim show ------------------------------------------------------------------------

def test_show_prints_every_value_with_its_provenance(capsys):
    assert main(["show", "h100"]) == 0
    out = capsys.readouterr().out
    assert "inherits: h100 <- h200" in out
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("compute.mma_efficiency"))
    assert "0.92" in line and "fitted on h200, inherited from h200" in line
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("memory.l2_bytes"))
    assert "50 MB" in line and line.rstrip().endswith("datasheet")
    assert any(ln.strip().startswith("stack.gemm.legacy_precisions") for ln in out.splitlines())


def test_show_filters_by_kind(capsys):
    assert main(["show", "a100", "--kind", "estimated"]) == 0
    rows = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("  ")]
    assert rows and all("estimated" in ln for ln in rows)


def test_show_works_for_machines_of_every_kind(capsys):
    for name in ("tpu_v4", "spr_cpu", "h200x2"):
        assert main(["show", name]) == 0
    assert "unstated" in capsys.readouterr().out


def test_machines_of_other_kinds_inherit_the_same_way(tmp_path):
    """Inheritance is on the parsed mappings, for every kind: a systolic array with a wider
    array, and a two-GPU system of H100s instead of H200s; provenance is optional there."""
    wide = _write(tmp_path, "wide", "inherit: tpu_v4\nname: wide\ncompute: {array: {rows: 256}}\n"
                  "provenance: {compute.array.rows: estimated}\n")
    m, base = load_machine(str(wide)), load_machine("tpu_v4")
    assert m.kind == base.kind and m.compute.array.rows == 256
    assert m.compute.array.cols == base.compute.array.cols
    assert resolve_machine(str(wide)).provenance["compute.array.rows"].kind == "estimated"
    pair = _write(tmp_path, "pair", "kind: system\ninherit: h200x2\nname: pair\ndevices:\n"
                  "  - {name: gpu0, hardware: h100, copy_engines: 2}\n"
                  "  - {name: gpu1, hardware: h100, copy_engines: 2}\n")
    system = load_machine(str(pair))
    assert [system.device_machine(d.name).name for d in system.devices] == ["h100", "h100"]
    assert system.links == load_machine("h200x2").links
