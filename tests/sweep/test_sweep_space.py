"""Sweep specs: parameters by dotted path, sampling, constraints, and errors before any work."""

from __future__ import annotations

import pytest
from sweep_stubs import grid_spec

from accelsim.errors import ConfigError
from accelsim.sweep.expr import parse_constraint
from accelsim.sweep.space import load_spec


def test_grid_is_the_product_of_values_filtered_by_constraints(write_spec):
    spec = load_spec(write_spec(grid_spec()))
    points = spec.points()
    assert len(points) == 4 * 3 * 2  # rows == cols keeps 4 of 16 array shapes
    assert all(p["compute.array.rows"] == p["compute.array.cols"] for p in points)
    assert spec.names == ("compute.array.rows", "compute.array.cols",
                          "memory.sram.capacity_bytes", "dataflow")


def test_values_are_canonicalised_by_the_machine_builder(write_spec):
    """'1 MiB' and 1048576 are one value, held as the machine holds it (bytes)."""
    spec = load_spec(write_spec(grid_spec(parameters={
        "memory.sram.capacity_bytes": ["1 MiB", 1048576, "2 MiB"]}, constraints=None)))
    assert [p["memory.sram.capacity_bytes"] for p in spec.points()] == [2**20, 2**21]


@pytest.mark.parametrize("values, expected", [
    ({"start": 16, "stop": 64, "step": 16}, [16, 32, 48, 64]),
    ({"start": 8, "stop": 100, "factor": 2}, [8, 16, 32, 64]),
    ({"low": 10, "high": 40, "num": 4}, [10, 20, 30, 40]),
    ({"low": 4, "high": 256, "num": 4, "log": True}, [4, 16, 64, 256]),
    (96, [96]),
])
def test_range_forms(write_spec, values, expected):
    spec = load_spec(write_spec(grid_spec(parameters={"compute.array.rows": values},
                                          constraints=None)))
    assert [p["compute.array.rows"] for p in spec.points()] == expected


def test_unit_strings_in_ranges(write_spec):
    spec = load_spec(write_spec(grid_spec(parameters={
        "memory.sram.capacity_bytes": {"start": "1 MiB", "stop": "8 MiB", "factor": 2}},
        constraints=None)))
    assert [p["memory.sram.capacity_bytes"] for p in spec.points()] == [2**20, 2**21, 2**22, 2**23]


@pytest.mark.parametrize("method", ["random", "lhs"])
def test_sampling_is_seeded_unique_and_respects_constraints(write_spec, method):
    spec_dict = grid_spec(sampling={"method": method, "samples": 10, "seed": 7})
    spec_dict["parameters"]["memory.sram.capacity_bytes"] = {"low": "1 MiB", "high": "64 MiB",
                                                             "log": True}
    a = load_spec(write_spec(spec_dict)).points()
    b = load_spec(write_spec(spec_dict)).points()
    assert a == b and len(a) == 10
    assert len({tuple(p.values()) for p in a}) == 10
    assert all(p["compute.array.rows"] == p["compute.array.cols"] for p in a)
    assert all(2**20 <= p["memory.sram.capacity_bytes"] <= 64 * 2**20 for p in a)
    spec_dict["sampling"]["seed"] = 8
    assert load_spec(write_spec(spec_dict)).points() != a


def test_latin_hypercube_hits_every_stratum_once(write_spec):
    n = 20
    spec = load_spec(write_spec(grid_spec(
        sampling={"method": "lhs", "samples": n, "seed": 1}, constraints=None,
        parameters={"compute.array.rows": {"low": 1, "high": 20},
                    "memory.dram.efficiency": {"low": 0.0001, "high": 1.0}})))
    pts = spec.points()
    strata = sorted(int((p["memory.dram.efficiency"] - 0.0001) / (1.0 - 0.0001) * n) for p in pts)
    assert strata == list(range(n))
    assert all(isinstance(p["compute.array.rows"], int) for p in pts)  # integer field: rounded


def test_workload_can_be_a_parameter(write_spec):
    d = grid_spec(parameters={"workload": ["resnet18", "alexnet"]}, constraints=None)
    del d["workload"]
    spec = load_spec(write_spec(d))
    assert [p["workload"] for p in spec.points()] == ["resnet18", "alexnet"]
    assert set(spec.workloads) == {"resnet18", "alexnet"}


def test_relative_paths_are_found_next_to_the_spec(write_spec, tmp_path, monkeypatch):
    write_spec(grid_spec())  # writes tiny.yaml beside the spec
    spec_path = write_spec({**grid_spec(), "workload": "tiny.yaml"}, name="rel.yaml")
    monkeypatch.chdir("/")
    assert load_spec(spec_path).workloads["tiny.yaml"].name == "tiny"


@pytest.mark.parametrize("parameters, constraints, match", [
    ({"compute.array.rowz": [8]}, None,
     r"parameters\.compute\.array\.rowz = 8: .*did you mean 'rows'"),
    ({"compute.arrays.rows": [8]}, None, "path names no section"),
    ({"compute.array": [8]}, None, "parameters.compute.array"),
    ({"compute.array.rows": []}, None, "empty list"),
    ({"compute.array.rows": {"start": 64, "stop": 8, "step": 8}}, None,
     r"empty range \(start > stop\)"),
    ({"compute.array.rows": {"low": 9, "high": 1}}, None, "empty range"),
    ({"compute.array.rows": [0, 8]}, None, "must be > 0"),
    ({"memory.sram.capacity_bytes": ["4 furlongs"]}, None, "capacity_bytes"),
    ({"dataflow": ["os", "xs"]}, None, "unknown dataflow"),
    ({"compute.array.rows": [8, 16]}, ["rows > 100"], "the constraints exclude every point"),
    ({"compute.array.rows": [8, 16]}, ["rows == colz"], "unknown parameter name 'colz'"),
    ({"compute.array.rows": [8]}, ["__import__('os').system('true')"], "not allowed"),
    ({"compute.array.rows": [8]}, ["rows.__class__ == 1"], "unknown parameter name"),
    ({"compute.array.rows": [8]}, ["rows =="], "invalid expression"),
])
def test_bad_input_is_one_clear_error_before_any_work(write_spec, parameters, constraints, match):
    path = write_spec(grid_spec(parameters=parameters, constraints=constraints))
    with pytest.raises(ConfigError, match=match) as info:
        load_spec(path)
    assert "\n" not in str(info.value)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("extra, match", [
    ({"sampling": {"method": "sobol"}}, "sampling.method"),
    ({"sampling": {"method": "random"}}, "sampling.samples"),
    ({"mode": "fast"}, "mode"),
    ({"metric": ["x"]}, "unknown key"),
    ({"hardware": "tpu_v9"}, "tpu_v9"),
    ({"workload": "resnet5000"}, "resnet5000"),
    ({"parameters": {"compute.array.rows": {"low": 8, "high": 64}}},
     "grid sampling needs discrete"),
])
def test_bad_spec_fields(write_spec, extra, match):
    with pytest.raises(ConfigError, match=match):
        load_spec(write_spec(grid_spec(**extra)))


def test_constraint_language():
    aliases = {"rows": "a.rows", "cols": "a.cols", "dataflow": "dataflow", "a.rows": "a.rows"}
    point = {"a.rows": 64, "a.cols": 32, "dataflow": "ws"}

    def holds(text):
        return parse_constraint(text, aliases, file=None, field="c").holds(point)

    assert holds("rows == 2 * cols")
    assert holds("a.rows * cols <= 4096 / 2 and dataflow == 'ws'")
    assert holds("16 <= cols < rows <= 64")
    assert not holds("rows % 3 == 0 or not dataflow != 'ws' and cols > 40")
    assert holds("rows // cols ** 1 - 1 == 1")
    assert not holds("rows / (cols - 32) > 0")  # division by zero: the point is excluded


def test_sampled_values_keep_the_field_type(write_spec):
    """Integer fields and byte sizes are drawn as whole numbers; other floats stay floats."""
    spec = load_spec(write_spec(grid_spec(
        sampling={"method": "random", "samples": 20, "seed": 3}, constraints=None,
        parameters={"compute.array.rows": {"low": 16, "high": 256},
                    "memory.sram.capacity_bytes": {"low": "1 MiB", "high": "8 MiB"},
                    "memory.dram.latency_s": {"low": 1, "high": 2}})))
    pts = spec.points()
    assert all(isinstance(p["compute.array.rows"], int) for p in pts)
    assert all(float(p["memory.sram.capacity_bytes"]).is_integer() for p in pts)
    assert not all(float(p["memory.dram.latency_s"]).is_integer() for p in pts)
