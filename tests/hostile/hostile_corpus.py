"""The hostile-input corpus: malformed files and argument lists, as a data-driven table.

Each :class:`~hostile_files.Case` is a command line (``{d}`` stands for the case's own folder),
the files to write there first, and the substrings that the one error line must contain (file,
field, value). Every case must end with exit code 2, exactly one line on stderr, no traceback,
within a time and memory bound (see ``test_corpus.py``). Files (configs, workloads, topology
CSVs, ONNX) are built in ``hostile_files.py``; sweep specs and the argument lists of every
command here. :func:`counts` gives the corpus size per input kind.
"""

from __future__ import annotations

from hostile_files import (
    BOMB,
    DEEP_BLOCK,
    GARBAGE,
    HUGE_INT,
    INF,
    NAN,
    ROOT,
    TINY,
    Case,
    FileBody,
    _dump,
    _machine,
    _set,
    config_cases,
    onnx_cases,
    topology_cases,
    workload_cases,
)


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
        "grid_billions": (dict(parameters={f"compute.array.{k}": {"start": 1, "stop": 10**6,
                                                                  "step": 1}
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
        cases.append(Case("spec", f"evaluator.{fn}",
                          (*sw, "--evaluator", f"hostile_evaluators:{fn}"),
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
            (("run", "scalesim_default", "{d}/w.yaml", "--dataflow", "xs", *out),
             ("dataflow", "xs")),
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
            (("op", "scalesim_default", "gemm", "--m", "100000", "--n", "100000", "--k", "64"),
             ("folds",)),
            (("op", "scalesim_default", "gemm", "--m", "0", "--n", "64", "--k", "64"),
             ("--m",)),
            (("op", "scalesim_default", "conv2d", "--n", "1", "--c", "3", "--h", "8", "--w", "8",
              "--k", "4", "--r", "3", "--s", "3", "--dtype", "fp99"), ("--dtype", "fp99")),
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
        "write": [  # outputs that cannot be written: one line naming the path and a reason
            (("energy", "scalesim_default", "{d}/w.yaml", "--plot", "{d}/p.xyz"),
             ("cannot write", "p.xyz", "not supported")),
            (("energy", "scalesim_default", "{d}/w.yaml", "--plot", "/dev/full"),
             ("cannot write /dev/full: No space left on device",)),
            (("roofline", "scalesim_default", "{d}/w.yaml", "--plot", "/dev/full"),
             ("cannot write /dev/full: No space left on device",)),
            (("run", "scalesim_default", "{d}/w.yaml", "--mode", "analytic", "--trace",
              "/dev/full", *out), ("cannot write /dev/full: No space left on device",)),
            (("run", "scalesim_default", "{d}/w.yaml", "--mode", "analytic", "--report",
              "/dev/full", *out), ("cannot write /dev/full: No space left on device",)),
            (("run", "h200", "{d}/w.yaml", "--trace", "/dev/full", *out),
             ("cannot write /dev/full: No space left on device",)),
            (("run", "scalesim_default", "{d}/w.yaml", "--mode", "analytic", "--out",
              "{d}/w.yaml/sub"), ("cannot write", "w.yaml/sub")),
            (("energy", "scalesim_default", "{d}/w.yaml", "--out", "{d}/w.yaml/sub"),
             ("cannot write", "w.yaml/sub")),
            (("scalesim", "-c", str(ROOT / "configs/scalesim/scale.cfg"), "-t", "{d}/t.csv",
              "-i", "gemm", "-p", "{d}/w.yaml/sub"), ("cannot write", "w.yaml/sub")),
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
