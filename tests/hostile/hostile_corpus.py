"""The hostile-input corpus: malformed files and argument lists, as a data-driven table.

Each :class:`Case` is a command line (``{d}`` stands for the case's own folder), the files to
write there first, and the substrings that the one error line must contain (file, field,
value). Every case must end with exit code 2, exactly one line on stderr, no traceback, within
a time and memory bound (see ``test_corpus.py``). Cases are grouped by input kind; ``KINDS``
counts them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]

FileBody = str | bytes | Callable[[Path], None]


@dataclass(frozen=True)
class Case:
    """One hostile input: ``argv`` (with ``{d}`` = the case folder), files, expected words."""

    kind: str
    name: str
    argv: tuple[str, ...]
    files: dict[str, FileBody] = field(default_factory=dict)
    expect: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        """``kind/name``, the pytest id."""
        return f"{self.kind}/{self.name}"


TINY = "name: tiny\nops:\n  - {op: gemm, name: g0, m: 64, n: 64, k: 64}\n"
NAN, INF = float("nan"), float("inf")
HUGE_INT = 99999999999999999999999999
BOMB = "".join(f"{c}: &{c} [{', '.join([f'*{p}'] * 9) if p else ', '.join(['x'] * 9)}]\n"
               for p, c in zip([None, *"abcdefg"], "abcdefgh"))
"""A billion-laughs document: 9^8 = 43 million leaves from a few hundred bytes."""
DEEP_FLOW = "x: " + "[" * 5000 + "]" * 5000 + "\n"
DEEP_BLOCK = "".join(" " * i + "a:\n" for i in range(200)) + " " * 200 + "b: 1\n"
GARBAGE = bytes(range(256)) * 8


def _machine(name: str = "scalesim_default") -> dict:
    return yaml.safe_load((ROOT / "configs" / "hardware" / f"{name}.yaml").read_text())


def _set(data: dict, path: str, value: object) -> dict:
    out = yaml.safe_load(yaml.safe_dump(data))
    node = out
    parts = path.split(".")
    for p in parts[:-1]:
        node = node[p]
    node[parts[-1]] = value
    return out


def _dump(data: object) -> str:
    return yaml.safe_dump(data, sort_keys=False)


def _sparse(size: int) -> Callable[[Path], None]:
    def write(p: Path) -> None:
        with open(p, "wb") as fh:
            fh.truncate(size)
    return write


def config_cases() -> list[Case]:
    """Machine YAML files (systolic and GPU) with bad values, run or used by ``op``."""
    base = _machine()
    run = ("run", "{d}/m.yaml", "{d}/w.yaml", "--mode", "analytic", "--out", "{d}/out")
    fields = {
        "compute.array.rows": [NAN, INF, -INF, -128, 0, 1e30, HUGE_INT, "abc", [1, 2], {"a": 1},
                               None, True, 12.5, "1e400"],
        "compute.array.word_bytes": [0, -1, NAN, 1e300],
        "compute.array.output_word_bytes": [0, -2],
        "compute.array.dataflow": ["xx", 3],
        "compute.array.precision": ["fp99"],
        "clock_hz": [NAN, "-1 GHz", "1 GHz GHz", INF, 0, "1e400 Hz", 10**400],
        "memory.sram.capacity_bytes": ["-1 MiB", NAN, "1e400 B", "1 XiB", "64 kg"],
        "memory.sram.ifmap_fraction": [1.5, NAN],
        "memory.dram.bandwidth_bytes_per_s": [0, -INF, NAN, "-1 GB/s"],
        "memory.dram.latency_s": ["-1 ns", NAN],
    }
    cases = []
    for path, values in fields.items():
        for i, v in enumerate(values):
            shown = "nan" if isinstance(v, float) and math.isnan(v) else None
            cases.append(Case("config", f"{path}[{i}]", run,
                              {"m.yaml": _dump(_set(base, path, v)), "w.yaml": TINY},
                              ("m.yaml", path) + ((shown,) if shown else ())))
    raw = {
        "unknown_key": (_dump({**base, "colour": "red"}), ("m.yaml", "colour")),
        "unknown_kind": (_dump({**base, "kind": "quantum"}), ("m.yaml", "kind", "quantum")),
        "energy_table_missing": (_dump(_set(base, "energy.table", "no_such_table")),
                                 ("m.yaml", "energy.table", "no_such_table")),
        "alias_bomb": (BOMB + _dump(base), ("m.yaml", "alias")),
        "alias_bomb_in_field": ("a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                                "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" + _dump(base)
                                .replace("rows: 32", "rows: *c"), ("m.yaml",)),
        "deep_flow": (DEEP_FLOW, ("m.yaml",)),
        "deep_block": (DEEP_BLOCK, ("m.yaml", "nested")),
        "binary_garbage": (GARBAGE, ("m.yaml",)),
        "nul_bytes": ("kind: systolic\x00\x00\n", ("m.yaml",)),
        "empty": ("", ("m.yaml",)),
        "list_root": ("- 1\n- 2\n", ("m.yaml", "mapping")),
        "scalar_root": ("42\n", ("m.yaml", "mapping")),
        "tabs": ("kind:\tsystolic\n\tname: x\n", ("m.yaml", "YAML")),
        "bad_utf8": (b"name: \xff\xfe\xfa\n", ("m.yaml", "UTF-8")),
        "undefined_alias": ("name: *nope\n", ("m.yaml", "alias")),
        "python_tag": ("name: !!python/object/apply:os.system [echo hi]\n", ("m.yaml",)),
        "huge_string_value": (_dump(_set(base, "compute.array.rows", "9" * 200_000)),
                              ("m.yaml", "compute.array.rows")),
        "too_large_file": (_sparse(200 * 2**20), ("m.yaml", "limit")),
    }
    for name, (body, expect) in raw.items():
        cases.append(Case("config", name, run, {"m.yaml": body, "w.yaml": TINY}, expect))
    cases.append(Case("config", "directory_as_machine", ("run", "{d}/sub", "{d}/w.yaml"),
                      {"sub/x.txt": "", "w.yaml": TINY}, ("sub",)))
    gpu = _machine("h200")
    op = ("op", "{d}/g.yaml", "gemm", "--m", "64", "--n", "64", "--k", "64")
    for path, v in (("compute.sm_count", NAN), ("compute.sm_count", 0), ("compute.clock_hz", INF),
                    ("memory.hbm.bandwidth_bytes_per_s", -1), ("compute.mma_efficiency", NAN),
                    ("compute.sm_count", HUGE_INT)):
        cases.append(Case("config", f"gpu.{path}={v}", op, {"g.yaml": _dump(_set(gpu, path, v))},
                          ("g.yaml", path)))
    return cases


def workload_cases() -> list[Case]:
    """Workload YAML files with bad operators, dimensions, dtypes and structure."""
    run = ("run", "scalesim_default", "{d}/w.yaml", "--mode", "analytic", "--out", "{d}/out")

    def gemm(**kw: object) -> str:
        op = {"op": "gemm", "name": "g", "m": 64, "n": 64, "k": 64, **kw}
        return _dump({"name": "w", "ops": [op]})

    cases = []
    for key, values in {"m": [NAN, INF, -5, 0, 1e12, HUGE_INT, "abc", None, [1], 2.5],
                        "k": [-INF, 10**30], "batch": [0, 1e13, NAN],
                        "dtype": ["fp99", 7, ["bf16"]]}.items():
        for i, v in enumerate(values):
            cases.append(Case("workload", f"gemm.{key}[{i}]", run, {"w.yaml": gemm(**{key: v})},
                              ("w.yaml", f"ops[0].{key}")))
    conv = {"op": "conv2d", "name": "c", "c": 3, "h": 8, "w": 8, "k": 4, "r": 3, "s": 3}
    for key, v in (("stride", 0), ("pad", -1), ("pad", NAN), ("r", 100), ("groups", 2),
                   ("h", 1e12), ("c", INF)):
        cases.append(Case("workload", f"conv.{key}={v}", run,
                          {"w.yaml": _dump({"name": "w", "ops": [{**conv, key: v}]})},
                          ("w.yaml", "ops[0]")))
    raw = {
        "unknown_op": (_dump({"ops": [{"op": "warp", "name": "x"}]}), ("ops[0].op", "warp")),
        "unknown_field": (gemm(colour=1), ("ops[0].colour",)),
        "missing_field": (_dump({"ops": [{"op": "gemm", "name": "g", "m": 1, "n": 1}]}),
                          ("ops[0].k",)),
        "ops_empty": (_dump({"name": "w", "ops": []}), ("ops",)),
        "ops_mapping": (_dump({"name": "w", "ops": {"a": 1}}), ("ops",)),
        "op_not_mapping": (_dump({"name": "w", "ops": [5]}), ("ops[0]",)),
        "defaults_list": (_dump({"name": "w", "defaults": [1], "ops": [{"op": "gemm", "name": "g",
                                                                         "m": 1, "n": 1, "k": 1}]}),
                          ("defaults",)),
        "unknown_top_key": (_dump({"name": "w", "opz": []}), ("opz",)),
        "alias_bomb": (BOMB + gemm(), ("alias",)),
        "alias_bomb_ops": ("a: &a [{op: gemm, name: g, m: 1, n: 1, k: 1}, *a]\n", ("w.yaml",)),
        "deep_nesting": (DEEP_BLOCK, ("nested",)),
        "binary": (GARBAGE, ("w.yaml",)),
        "huge_dims_all": (gemm(m=10**9, n=10**9, k=10**9), ("w.yaml", "g")),
        "huge_folds": (gemm(m=10**5, n=10**5, k=10**5), ("w.yaml", "folds")),
    }
    for name, (body, expect) in raw.items():
        cases.append(Case("workload", name, run, {"w.yaml": body},
                          expect if "w.yaml" in expect else ("w.yaml", *expect)))
    return cases


def topology_cases() -> list[Case]:
    """SCALE-Sim topology CSVs (conv and GEMM forms) with bad cells and structure."""
    conv_head = "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n"
    gemm_head = "Layer, M, N, K,\n"
    run = ("run", "scalesim_default", "{d}/t.csv", "--mode", "analytic", "--out", "{d}/out")
    sc = ("scalesim", "-c", str(ROOT / "configs/scalesim/scale.cfg"), "-t", "{d}/t.csv",
          "-p", "{d}/out")
    bodies = {
        "nan_cell": (conv_head + "l1, nan, 8, 3, 3, 4, 4, 1,\n", "IFMAP Height"),
        "inf_cell": (conv_head + "l1, 8, inf, 3, 3, 4, 4, 1,\n", "IFMAP Width"),
        "neg_cell": (conv_head + "l1, 8, 8, -3, 3, 4, 4, 1,\n", "Filter Height"),
        "zero_stride": (conv_head + "l1, 8, 8, 3, 3, 4, 4, 0,\n", "Strides"),
        "huge_int": (conv_head + f"l1, 8, 8, 3, 3, {HUGE_INT}, 4, 1,\n", "Channels"),
        "float_cell": (conv_head + "l1, 8, 8, 3, 3, 4.5, 4, 1,\n", "Channels"),
        "text_cell": (conv_head + "l1, 8, 8, 3, 3, four, 4, 1,\n", "Channels"),
        "short_row": (conv_head + "l1, 8, 8, 3,\n", "row 2"),
        "filter_too_big": (conv_head + "l1, 4, 4, 9, 9, 4, 4, 1,\n", "row 2"),
        "header_only": (conv_head, "row 2"),
        "empty": ("", "row 2"),
        "gemm_nan": (gemm_head + "g, 64, nan, 64,\n", "N"),
        "gemm_huge": (gemm_head + "g, 1e12, 64, 64,\n", "M"),
        "gemm_1e300": (gemm_head + "g, 64, 64, 1e300,\n", "K"),
        "gemm_huge_folds": (gemm_head + "g, 100000, 100000, 64,\n", "folds"),
        "field_over_csv_limit": (gemm_head + "g, " + "9" * 200_000 + ", 1, 1,\n", "t.csv"),
        "binary": (GARBAGE, "t.csv"),
        "nul_byte": (gemm_head + "g, 6\x004, 1, 1,\n", "t.csv"),
        "unterminated_quote": (gemm_head + 'g, "64, 1, 1,\n', "t.csv"),
        "too_large_file": (_sparse(200 * 2**20), "limit"),
    }
    cases = []
    for name, (body, word) in bodies.items():
        cases.append(Case("topology", f"run.{name}", run, {"t.csv": body}, ("t.csv", word)))
    for name in ("nan_cell", "zero_stride", "huge_int", "field_over_csv_limit", "binary",
                 "gemm_huge"):
        body, word = bodies[name]
        argv = sc + (("-i", "gemm") if name.startswith("gemm") else ())
        cases.append(Case("topology", f"scalesim.{name}", argv, {"t.csv": body}, ("t.csv", word)))
    return cases


def _onnx_model(kind: str) -> Callable[[Path], None]:
    """An ONNX file writer (built with ``onnx.helper`` when the case runs)."""

    def write(p: Path) -> None:
        from onnx import TensorProto, helper

        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 64])
        w = helper.make_tensor("w", TensorProto.FLOAT, [64, 64], [0.0] * 4096)
        if kind == "cyclic":
            nodes = [helper.make_node("MatMul", ["x", "b"], ["a"], name="m1"),
                     helper.make_node("Relu", ["a"], ["b"], name="r1"),
                     helper.make_node("Identity", ["a"], ["y"], name="i1")]
        else:
            nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="m1")]
        g = helper.make_graph(nodes, "g", [x], [y], [w])
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        p.write_bytes(model.SerializeToString())

    return write


def onnx_cases() -> list[Case]:
    """ONNX files and dimension bindings: garbage, cycles, bad and huge dimension values."""
    run = ("run", "scalesim_default")
    tail = ("--mode", "analytic", "--out", "{d}/out")
    good = {"m.onnx": _onnx_model("ok")}
    cases = []
    for i, spec in enumerate(["N=nan", "N=-4", "N=0", "N=inf", f"N={HUGE_INT}", "N=1e12", "N=",
                              "=4", "N=4.5", "N=99999999999", "N=4,M=4", "N=10000000000000000000000"]):
        cases.append(Case("onnx", f"dims[{i}]", (*run, "{d}/m.onnx:" + spec, *tail), good,
                          ("m.onnx", spec.partition("=")[0] or "=")))
    cases.append(Case("onnx", "dims_missing", (*run, "{d}/m.onnx", *tail), good, ("m.onnx", "N")))
    cases.append(Case("onnx", "cyclic", (*run, "{d}/c.onnx:N=4", *tail),
                      {"c.onnx": _onnx_model("cyclic")}, ("c.onnx", "cycle")))
    for name, body in (("garbage", GARBAGE), ("empty", b""), ("text", b"hello onnx\n"),
                       ("truncated_zeros", b"\x08\x07" + b"\x00" * 64)):
        cases.append(Case("onnx", name, (*run, "{d}/m.onnx", *tail), {"m.onnx": body}, ("m.onnx",)))
    cases.append(Case("onnx", "too_large_file", (*run, "{d}/m.onnx", *tail),
                      {"m.onnx": _sparse(200 * 2**20)}, ("m.onnx", "limit")))
    return cases


def spec_cases() -> list[Case]:
    """Sweep specs: bad ranges, sample counts, expressions, evaluators and output paths."""
    sw = ("sweep", "{d}/s.yaml", "--out", "{d}/r.csv", "--workers", "1", "--quiet")
    base = {"hardware": "scalesim_default", "workload": "{d}/w.yaml", "mode": "analytic",
            "parameters": {"compute.array.rows": [16, 32], "compute.array.cols": [16, 32]}}

    def spec(**kw: object) -> dict[str, FileBody]:
        data = {**base, **kw}
        return {"s.yaml": _dump(data), "w.yaml": TINY}

    def con(expr: str) -> dict[str, FileBody]:
        return spec(constraints=[expr])

    cases = []
    exprs = {
        "pow_tower": "rows ** rows ** rows ** rows > 1",
        "big_pow": "9 ** 999999 > rows",
        "huge_mult": "rows * 10 ** 60 * 10 ** 60 * 10 ** 60 * 10 ** 60 * 10 ** 60 > 1",
        "str_mult": "'a' * 10 ** 9 == rows",
        "str_mult_nested": "('ab' * 999) * 999 == 'x'",
        "call": "__import__('os').system('echo hi') == 0",
        "attr": "rows.__class__ == 1",
        "subscript": "rows[0] == 1",
        "lambda": "(lambda: 1)() == 1",
        "comprehension": "[x for x in range(9)] == 1",
        "unknown_name": "rowz == cols",
        "syntax": "rows ==",
        "long_expr": " + ".join(["rows"] * 2000) + " > 0",
        "deep_parens": "(" * 500 + "rows" + ")" * 500 + " > 1",
        "float_overflow": "rows * 1e308 * 1e308 > 1",
        "mod_zero_and_str": "'%s' % rows == 'x'",
        "not_a_string": 42,
        "walrus": "(x := rows) > 1",
    }
    for name, e in exprs.items():
        cases.append(Case("spec", f"constraint.{name}", sw, con(e), ("s.yaml", "constraints[0]")))
    bad = {
        "grid_billions": (dict(parameters={f"compute.array.{k}": {"start": 1, "stop": 10**6, "step": 1}
                                           for k in ("rows", "cols")}), "compute.array"),
        "range_step_tiny": (dict(parameters={"compute.array.rows": {"start": 1, "stop": 1e9,
                                                                    "step": 1e-9}}), "rows"),
        "range_nan": (dict(parameters={"compute.array.rows": {"start": NAN, "stop": 8, "step": 1}}),
                      "rows"),
        "range_inf": (dict(parameters={"compute.array.rows": {"start": 1, "stop": INF, "step": 1}}),
                      "rows"),
        "factor_tiny": (dict(parameters={"compute.array.rows": {"start": 1, "stop": 1e300,
                                                                "factor": 1.0000001}}), "rows"),
        "num_huge": (dict(parameters={"compute.array.rows": {"low": 1, "high": 64, "num": 10**12}}),
                     "num"),
        "num_nan": (dict(parameters={"compute.array.rows": {"low": 1, "high": 64, "num": NAN}}),
                    "num"),
        "low_nan": (dict(sampling={"method": "random", "samples": 4},
                         parameters={"compute.array.rows": {"low": NAN, "high": 64}}), "rows"),
        "samples_huge": (dict(sampling={"method": "random", "samples": 10**12}), "samples"),
        "samples_nan": (dict(sampling={"method": "lhs", "samples": NAN}), "samples"),
        "seed_huge": (dict(sampling={"method": "random", "samples": 4, "seed": HUGE_INT}), "seed"),
        "value_nan": (dict(parameters={"compute.array.rows": [NAN]}), "rows"),
        "value_huge": (dict(parameters={"compute.array.rows": [HUGE_INT]}), "rows"),
        "values_list_bomb": ("values_bomb", "alias"),
        "unknown_key": (dict(colour=1), "colour"),
        "bad_mode": (dict(mode="quantum"), "mode"),
        "bad_path": (dict(parameters={"compute.array.nope": [1]}), "nope"),
        "metrics_not_list": (dict(metrics={"a": 1}), "metrics"),
        "unknown_metric": (dict(metrics=["speed"]), "speed"),
        "bad_dataflow": (dict(parameters={"dataflow": ["xs"]}), "dataflow"),
        "hardware_missing": (dict(hardware="no_such_machine"), "no_such_machine"),
        "workload_missing": (dict(workload="no_such_workload"), "no_such_workload"),
    }
    for name, (kw, word) in bad.items():
        if kw == "values_bomb":
            files = {"s.yaml": BOMB + _dump(base), "w.yaml": TINY}
        else:
            files = spec(**kw)
        cases.append(Case("spec", name, sw, files, ("s.yaml", word)))
    raw = {"binary": GARBAGE, "alias_bomb": BOMB, "deep": DEEP_BLOCK, "list_root": "- 1\n"}
    for name, body in raw.items():
        cases.append(Case("spec", f"file.{name}", sw, {"s.yaml": body}, ("s.yaml",)))
    # evaluators and output paths
    ev = {"hostile_evaluators.py": EVALUATORS}
    for fn in ("wrong_signature", "returns_list", "returns_nan_key", "not_callable"):
        cases.append(Case("spec", f"evaluator.{fn}", (*sw, "--evaluator", f"hostile_evaluators:{fn}"),
                          {**spec(), **ev}, ("--evaluator", fn)))
    cases.append(Case("spec", "out_is_directory", ("sweep", "{d}/s.yaml", "--out", "{d}/o.csv",
                                                   "--workers", "1", "--quiet"),
                      {**spec(), "o.csv/keep": ""}, ("o.csv", "directory")))
    return cases


EVALUATORS = '''
def wrong_signature(point):
    return {"x": 1.0}


def returns_list(ctx, point):
    return [1, 2, 3]


def returns_nan_key(ctx, point):
    return {None: 1.0}


not_callable = 42
'''


def cli_cases() -> list[Case]:
    """Argument lists of every command: bad numbers, names, flags and output paths."""
    out = ("--out", "{d}/out")
    groups: dict[str, list[tuple[tuple[str, ...], tuple[str, ...]]]] = {
        "run": [
            (("run", "scalesim_default", "{d}/w.yaml", "--set", "compute.array.rows=nan", *out),
             ("--set", "compute.array.rows")),
            (("run", "scalesim_default", "{d}/w.yaml", "--set", "compute.array.rows=.inf", *out),
             ("--set", "compute.array.rows")),
            (("run", "scalesim_default", "{d}/w.yaml", "--set", f"compute.array.rows={HUGE_INT}",
              *out), ("--set", "rows")),
            (("run", "scalesim_default", "{d}/w.yaml", "--set", "compute.array.word_bytes=0", *out),
             ("--set", "word_bytes")),
            (("run", "scalesim_default", "{d}/w.yaml", "--set", "compute.array.nope=1", *out),
             ("--set", "compute.array.nope")),
            (("run", "scalesim_default", "{d}/w.yaml", "--set", "rows", *out), ("--set", "rows")),
            (("run", "scalesim_default", "{d}/w.yaml", "--set", "compute.array.rows=[[[[", *out),
             ("--set", "rows")),
            (("run", "scalesim_default", "{d}/w.yaml", "--set",
              "compute.array.rows=" + "[" * 300 + "]" * 300, *out), ("--set", "rows")),
            (("run", "scalesim_default", "{d}/w.yaml", "--set",
              "compute.array.rows=&a [*a]", *out), ("--set", "rows")),
            (("run", "scalesim_default", "{d}/w.yaml", "--dataflow", "xs", *out), ("dataflow", "xs")),
            (("run", "scalesim_default", "{d}/w.yaml", "--mode", "quantum"), ("--mode",)),
            (("run", "no_such_hw", "{d}/w.yaml"), ("no_such_hw",)),
            (("run", "scalesim_default", "no_such_workload"), ("no_such_workload",)),
            (("run", "tpu_v4", "llama3_8b_decode:batch=nan", *out), ("batch", "nan")),
            (("run", "tpu_v4", "llama3_8b_decode:batch=-1", *out), ("batch", "-1")),
            (("run", "tpu_v4", "llama3_8b_decode:batch=0", *out), ("batch",)),
            (("run", "tpu_v4", f"llama3_8b_decode:batch={HUGE_INT}", *out), ("batch",)),
            (("run", "tpu_v4", "llama3_8b_decode:batch=1000000000000", *out), ("batch",)),
            (("run", "tpu_v4", "llama3_8b_decode:context=inf", *out), ("context", "inf")),
            (("run", "tpu_v4", "resnet50:dtype=fp99", *out), ("dtype", "fp99")),
            (("run", "tpu_v4", "resnet50:colour=red", *out), ("colour",)),
            (("run", "tpu_v4", "resnet50:batch", *out), ("batch",)),
            (("run", "scalesim_default", "{d}/w.yaml", "--out", "{d}/w.yaml"), ("w.yaml",)),
            (("run", "scalesim_default", "{d}/w.yaml", "--trace", "{d}", *out), ("--trace",)),
            (("run", "scalesim_default", "{d}/w.yaml", "--report", "{d}", *out), ("--report",)),
            (("run", "h200", "llama3_8b_decode:batch=nan", *out), ("batch", "nan")),
        ],
        "op": [
            (("op", "h200", "gemm", "--m", "0", "--n", "64", "--k", "64"), ("--m", "0")),
            (("op", "h200", "gemm", "--m", "-1", "--n", "64", "--k", "64"), ("--m",)),
            (("op", "h200", "gemm", "--m", "nan", "--n", "64", "--k", "64"), ("--m",)),
            (("op", "h200", "gemm", "--m", str(HUGE_INT), "--n", "64", "--k", "64"), ("--m",)),
            (("op", "h200", "gemm", "--m", "1000000000000", "--n", "64", "--k", "64"), ("--m",)),
            (("op", "h200", "gemm", "--m", "1000000000", "--n", "4096", "--k", "4096"),
             ("CTAs", "analytic")),
            (("op", "h200", "gemm", "--m", "64", "--n", "64", "--k", "64", "--dtype", "fp99"),
             ("--dtype", "fp99")),
            (("op", "h200", "gemm", "--m", "64"), ("--n",)),
            (("op", "h200", "warp"), ("warp",)),
            (("op", "h200", "attention", "--batch", "100000", "--heads", "32", "--seq", "4096",
              "--head-dim", "128"), ("CTAs",)),
            (("op", "h200", "attention", "--batch", "1", "--heads", "0", "--seq", "4096",
              "--head-dim", "128"), ("--heads",)),
            (("op", "h200", "conv2d", "--n", "1", "--c", "3", "--h", "8", "--w", "8", "--k", "4",
              "--r", "99", "--s", "3"), ("conv2d",)),
            (("op", "h200x2", "copy", "--src", "host", "--dst", "gpu0", "--bytes", "nan"),
             ("--bytes",)),
            (("op", "h200x2", "copy", "--src", "host", "--dst", "gpu0", "--bytes", "1e30"),
             ("--bytes",)),
            (("op", "h200x2", "copy", "--src", "host", "--dst", "gpu0", "--bytes", "-5"),
             ("--bytes",)),
            (("op", "h200x2", "copy", "--src", "host", "--dst", "gpu9", "--bytes", "1MB"),
             ("gpu9",)),
            (("op", "h200x2", "allreduce", "--bytes", "inf"), ("--bytes",)),
        ],
        "energy": [
            (("energy", "scalesim_default", "{d}/w.yaml", "--dataflows", "os,xx"), ("xx",)),
            (("energy", "scalesim_default", "{d}/w.yaml", "--dataflows", ","), ("dataflows",)),
            (("energy", "scalesim_default", "{d}/w.yaml", "--table", "no_such_table"),
             ("no_such_table",)),
            (("energy", "scalesim_default", "{d}/w.yaml", "--set", "compute.array.rows=nan"),
             ("--set", "rows")),
            (("energy", "{d}/m.yaml", "{d}/w.yaml"), ("m.yaml", "energy.table", "no_such_table")),
            (("energy", "scalesim_default", "{d}/w.yaml", "--plot", "{d}"), ("--plot",)),
        ],
        "roofline": [
            (("roofline", "scalesim_default", "{d}/w.yaml", "--precision", "fp99"), ("fp99",)),
            (("roofline", "scalesim_default", "{d}/w.yaml", "--dataflow", "xs"), ("xs",)),
            (("roofline", "scalesim_default", "{d}/w.yaml", "--measured", "{d}/meas.csv"),
             ("meas.csv",)),
            (("roofline", "scalesim_default", "{d}/w.yaml", "--measured", "{d}/nan.csv"),
             ("nan.csv", "time_s")),
            (("roofline", "scalesim_default", "{d}/w.yaml", "--measured", "{d}/big.csv"),
             ("big.csv",)),
            (("roofline", "scalesim_default", "{d}/w.yaml", "--plot", "{d}"), ("--plot",)),
        ],
        "sweep": [
            (("sweep", "{d}/nope.yaml", "--out", "{d}/r.csv"), ("nope.yaml",)),
            (("sweep", "{d}/s.yaml", "--out", "{d}/r.csv", "--workers", "0"), ("--workers",)),
            (("sweep", "{d}/s.yaml", "--out", "{d}/r.csv", "--workers", "-3"), ("--workers",)),
            (("sweep", "{d}/s.yaml", "--out", "{d}/r.csv", "--workers", "99999999"),
             ("--workers",)),
            (("sweep", "{d}/s.yaml", "--out", "{d}/r.csv", "--resume", "--force"), ("--resume",)),
            (("sweep", "{d}/s.yaml", "--out", "{d}/r.csv", "--evaluator", "nomodule"),
             ("--evaluator",)),
            (("sweep", "{d}/s.yaml", "--out", "{d}/r.csv", "--evaluator", "os:nope"),
             ("--evaluator",)),
            (("sweep", "{d}/s.yaml", "--out", "{d}/w.yaml"), ("w.yaml", "exists")),
            (("sweep", "{d}/s.yaml", "--out", "{d}/junk.csv", "--resume"), ("junk.csv",)),
        ],
        "compare": [
            (("compare", "{d}/w.yaml", "--hw", "no_such_hw"), ("no_such_hw",)),
            (("compare", "{d}/w.yaml", "--hw", ""), ("--hw",)),
            (("compare", "{d}/m.yaml"), ("m.yaml",)),
            (("compare", "{d}/w.yaml", "--energy-table", "no_such_table"), ("no_such_table",)),
        ],
        "place": [
            (("place", "no_such_node", "resnet50"), ("no_such_node",)),
            (("place", "node_gpu_npu", "resnet50:batch=nan"), ("batch", "nan")),
            (("place", "node_gpu_npu", "resnet50", "--policy", "pinned", "--pin", "x"), ("--pin",)),
            (("place", "node_gpu_npu", "resnet50", "--pin", "conv*=tpu9"), ("tpu9",)),
            (("place", "scalesim_default", "resnet50"), ("scalesim_default",)),
        ],
        "validate": [
            (("validate", "--cases", "{d}/cases.json"), ("cases.json",)),
            (("validate", "--cases", "{d}/deep.json"), ("deep.json",)),
            (("validate", "--cases", "{d}/bin.json"), ("bin.json",)),
            (("validate", "--cases", "{d}"), ("directory",)),
        ],
        "scalesim": [
            (("scalesim", "-c", "{d}/bad.cfg", "-t", "{d}/t.csv", "-p", "{d}/o"), ("bad.cfg",)),
            (("scalesim", "-c", "{d}/nan.cfg", "-t", "{d}/t.csv", "-p", "{d}/o"),
             ("nan.cfg", "ArrayHeight")),
            (("scalesim", "-c", "{d}/bin.cfg", "-t", "{d}/t.csv", "-p", "{d}/o"), ("bin.cfg",)),
            (("scalesim", "-c", str(ROOT / "configs/scalesim/scale.cfg"), "-t", "{d}/t.csv",
              "-i", "xx", "-p", "{d}/o"), ("xx",)),
            (("scalesim", "-c", str(ROOT / "configs/scalesim/scale.cfg"), "-t", "{d}/t.csv",
              "-i", "gemm", "-p", "{d}/t.csv"), ("t.csv",)),
        ],
        "list": [
            (("list", "--nope"), ("--nope",)),
            (("list", "extra"), ("extra",)),
        ],
        "top": [
            (("quantum",), ("quantum",)),
            (("--nope",), ("--nope",)),
        ],
    }
    bad_energy = _dump(_set(_machine(), "energy.table", "no_such_table"))
    files: dict[str, FileBody] = {
        "w.yaml": TINY, "m.yaml": bad_energy,
        "meas.csv": "layer,time_s\nno_such_layer,1e-3\n",
        "nan.csv": "layer,time_s\ng0,nan\n",
        "big.csv": "layer,time_s\ng0," + "9" * 200_000 + "\n",
        "cases.json": "[{\"id\": 1}]",
        "deep.json": "[" * 100_000 + "]" * 100_000,
        "bin.json": GARBAGE,
        "bad.cfg": "[architecture_presets]\nArrayHeight: 32\nNope: 1\n",
        "nan.cfg": (ROOT / "configs/scalesim/scale.cfg").read_text().replace(
            "ArrayHeight:    32", "ArrayHeight:    nan"),
        "bin.cfg": GARBAGE,
        "t.csv": "Layer, M, N, K,\ng, 64, 64, 64,\n",
        "s.yaml": _dump({"hardware": "scalesim_default", "workload": "{d}/w.yaml",
                         "parameters": {"compute.array.rows": [16, 32]}}),
        "junk.csv": "point_id,x\np1,3\n\x00\x01\x02garbage",
    }
    cases = []
    for cmd, items in groups.items():
        for i, (argv, expect) in enumerate(items):
            cases.append(Case(f"cli.{cmd}", f"{i}", argv, files, expect))
    return cases


def all_cases() -> list[Case]:
    """The whole corpus."""
    return (config_cases() + workload_cases() + topology_cases() + onnx_cases() + spec_cases()
            + cli_cases())


def counts() -> dict[str, int]:
    """Cases per input kind (the CLI cases per command)."""
    out: dict[str, int] = {}
    for c in all_cases():
        out[c.kind] = out.get(c.kind, 0) + 1
    return out
