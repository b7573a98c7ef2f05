"""The hostile-input corpus, part 1: the case type, shared bodies, and malformed files
(machine configs, workloads, topology CSVs, ONNX models).

Each :class:`Case` is a command line (``{d}`` stands for the case's own folder), the files to
write there first, and the substrings that the one error line must contain (file, field,
value). Every case must end with exit code 2, exactly one line on stderr, no traceback, within
a time and memory bound (see ``test_corpus.py``). Cases are grouped by input kind;
``hostile_corpus.counts()`` counts them.
"""

from __future__ import annotations

import json
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
        "alias_bomb_in_field": ("a: &a [1,1,1,1,1,1,1,1,1,1]\n"
                                "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
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
        "huge_batch_folds": (gemm(m=512, n=512, k=64, batch=10**7), ("w.yaml", "folds")),
        "huge_attention": (_dump({"name": "w", "ops": [{
            "op": "attention", "name": "a", "batch": 2 * 10**6, "heads": 128, "seq_q": 10**5,
            "seq_kv": 10**5, "head_dim": 128}]}), ("w.yaml", "folds")),
        "huge_softmax_gpu": (_dump({"name": "w", "ops": [{
            "op": "softmax", "name": "s", "rows": 2 * 10**9, "cols": 2 * 10**9}]}),
            ("does not fit on h200",)),
    }
    for name, (body, expect) in raw.items():
        argv = (("run", "h200", "{d}/w.yaml", "--out", "{d}/out") if name.endswith("_gpu")
                else run)
        if not name.endswith("_gpu") and "w.yaml" not in expect:
            expect = ("w.yaml", *expect)
        cases.append(Case("workload", name, argv, {"w.yaml": body}, expect))
    cases += model_cases()
    return cases


def model_cases() -> list[Case]:
    """Model specs and Hugging Face configs whose parameters contradict the model or exceed a
    bound (issue 27): heads that do not divide the hidden size, 2^31 layers, deep JSON, a mode
    the model has not, a key given twice, a ``defaults`` key no operator takes."""
    run = ("run", "scalesim_default", "--mode", "analytic", "--out", "{d}/out")
    llama = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 4096,
             "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 1024,
             "vocab_size": 1000, "max_position_embeddings": 4096}
    configs = {
        "hf_heads_not_dividing": ({**llama, "hidden_size": 4097}, ("num_attention_heads", "4097")),
        "hf_layers_2e31": ({**llama, "num_hidden_layers": 2**31 - 1}, ("num_hidden_layers",
                                                                      "10,000")),
        "hf_gpt2_heads": ({"model_type": "gpt2", "n_layer": 2, "n_embd": 770, "n_head": 12,
                           "vocab_size": 100, "n_positions": 1024}, ("n_head", "770")),
    }
    cases = [Case("workload", name, (*run[:2], "{d}/m.json", *run[2:]),
                  {"m.json": json.dumps(body)}, ("m.json", *expect))
             for name, (body, expect) in configs.items()]
    for name, body in (("hf_deep_json", "[" * 100_000 + "]" * 100_000),
                       ("hf_deep_object", '{"a":' * 5000 + "1" + "}" * 5000)):
        cases.append(Case("workload", name, (*run[:2], "{d}/m.json", *run[2:]), {"m.json": body},
                          ("m.json", "nested deeper")))
    cases.append(Case("workload", "hf_encoder_decode",
                      (*run[:2], "{d}/m.json:mode=decode", *run[2:]),
                      {"m.json": json.dumps({"model_type": "bert", "num_hidden_layers": 2,
                                             "hidden_size": 64, "num_attention_heads": 4,
                                             "intermediate_size": 128, "vocab_size": 100,
                                             "max_position_embeddings": 64})},
                      ("m.json", "mode", "decode")))
    for name, spec, expect in (
            ("zoo_decoder_as_encoder", "gpt2_decode:mode=encoder", ("gpt2_decode.mode", "encoder")),
            ("zoo_decode_as_prefill", "gpt2_decode:mode=prefill", ("gpt2_decode.mode", "prefill")),
            ("zoo_encoder_as_decoder", "bert_base:mode=decode", ("bert_base.mode", "decode")),
            ("zoo_encoder_context", "bert_base:context=64", ("bert_base.context", "64")),
            ("zoo_key_twice", "gpt2:batch=1,batch=64", ("batch", "given twice")),
            ("zoo_batch_huge", f"gpt2:batch={HUGE_INT}", ("gpt2.batch",)),
            ("zoo_batch_float", "gpt2:batch=1e400", ("gpt2.batch",)),
            ("onnx_dim_twice", "{d}/m.onnx:N=4,N=8", ("N", "given twice"))):
        cases.append(Case("workload", name, (*run[:2], spec, *run[2:]), {}, expect))
    cases.append(Case("workload", "defaults_unused", run[:2] + ("{d}/w.yaml",) + run[2:],
                      {"w.yaml": _dump({"defaults": {"colour": "red"}, "ops": [
                          {"op": "gemm", "name": "g", "m": 1, "n": 1, "k": 1}]})},
                      ("w.yaml", "defaults.colour")))
    cases.append(Case("workload", "gpu_table_without_idle_power",
                      ("run", "h200", "{d}/w.yaml", "--set", "energy.table=eyeriss_like",
                       "--out", "{d}/out"), {"w.yaml": TINY},
                      ("eyeriss_like.yaml", "leakage.gpu_idle_pe", "h200")))
    return cases


def topology_cases() -> list[Case]:
    """SCALE-Sim topology CSVs (conv and GEMM forms) with bad cells and structure."""
    conv_head = ("Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, "
                 "Num Filter, Strides,\n")
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

        rows = 10**12 if kind == "huge" else "N"
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, 64])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, 64])
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
                              "=4", "N=4.5", "N=99999999999", "N=4,M=4",
                              "N=10000000000000000000000"]):
        cases.append(Case("onnx", f"dims[{i}]", (*run, "{d}/m.onnx:" + spec, *tail), good,
                          ("m.onnx", spec.partition("=")[0] or "=")))
    cases.append(Case("onnx", "dims_missing", (*run, "{d}/m.onnx", *tail), good, ("m.onnx", "N")))
    cases.append(Case("onnx", "cyclic", (*run, "{d}/c.onnx:N=4", *tail),
                      {"c.onnx": _onnx_model("cyclic")}, ("c.onnx", "cycle")))
    cases.append(Case("onnx", "huge_fixed_dim", (*run, "{d}/h.onnx", *tail),
                      {"h.onnx": _onnx_model("huge")}, ("h.onnx", "1000000000000")))
    for name, body in (("garbage", GARBAGE), ("empty", b""), ("text", b"hello onnx\n"),
                       ("truncated_zeros", b"\x08\x07" + b"\x00" * 64)):
        cases.append(Case("onnx", name, (*run, "{d}/m.onnx", *tail), {"m.onnx": body}, ("m.onnx",)))
    cases.append(Case("onnx", "too_large_file", (*run, "{d}/m.onnx", *tail),
                      {"m.onnx": _sparse(200 * 2**20)}, ("m.onnx", "limit")))
    return cases
