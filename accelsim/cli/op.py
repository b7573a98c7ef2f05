"""``accelsim op HW OPNAME [options]``: time one operator on one machine.

    accelsim op h200 gemm --m 4096 --n 4096 --k 4096 --dtype bf16 --json
    accelsim op h200 gemm --m 4096 --n 4096 --k 4096 --dtype fp16 --sparsity 2:4 --json
    accelsim op h200 conv2d --n 32 --c 64 --h 56 --w 56 --k 64 --r 3 --s 3 --pad 1 --json
    accelsim op h200 attention --batch 4 --heads 32 --seq 4096 --head-dim 128 --causal --json
    accelsim op h200 layernorm --rows 4096 --cols 4096 --dtype bf16 --json
    accelsim op tpu_v4 gemm --m 4096 --n 4096 --k 4096 [--dataflow os] --json
    accelsim op tpu_v4 conv2d --n 1 --c 64 --h 56 --w 56 --k 64 --r 3 --s 3 --pad 1

Dispatch is by the machine's ``kind``: :data:`OP_HANDLERS` maps a kind to a handler
``(machine_name, op_name, argv) -> exit code``. ``gpu`` and ``systolic`` (``gemm`` and
``conv2d`` through :func:`accelsim.api.simulate`, at the array's precision) are handled here;
``system``
(copies and collectives: ``copy``, ``allreduce``, ``allgather``, ``reducescatter``,
``alltoall``) by the optional module ``accelsim.cli.op_links`` (its ``run_argv``), registered
when that module is present. A new kind adds one entry.

Imports: api, config, workload, errors.
"""

from __future__ import annotations

import argparse
import importlib
import json
from collections.abc import Callable

from accelsim.config.registry import load_machine_dict
from accelsim.errors import ConfigError, UnsupportedError
from accelsim.limits import MAX_DIM, check_number
from accelsim.report.terminal import scaled

GPU_OPS = ("gemm", "conv2d", "attention", "add", "relu", "gelu", "layernorm", "softmax")
"""Operator names a GPU machine accepts."""

SYSTOLIC_OPS = ("gemm", "conv2d")
"""Operator names a systolic machine accepts."""

Handler = Callable[[str, str, list[str]], int]
OP_HANDLERS: dict[str, Handler] = {}
"""Machine kind -> handler(machine_name, op_name, argv) -> exit code."""

OPTIONAL_HANDLERS = ("accelsim.cli.op_links",)
"""Modules that, when present, provide ``KIND`` and ``run_argv(machine, op, argv)``."""


class _ArgError(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # bad options -> one line, exit 2 (via main)
        raise ConfigError(self.prog, None, None, message)


def register(subparsers) -> None:
    """Add the ``op`` subcommand."""
    p = subparsers.add_parser(
        "op", help="time one operator on one machine (GPU ops, or a system's copies and "
                   "collectives)",
        description=__doc__.split("\n\n")[0] + "\n\nGPU ops: " + ", ".join(GPU_OPS)
        + ". Run 'accelsim op HW OPNAME --help' for an op's options.")
    p.add_argument("hw", metavar="HW", help="machine: built-in name or YAML path")
    p.add_argument("opname", metavar="OPNAME", help="operator (gemm, conv2d, attention, ...)")
    p.add_argument("rest", nargs=argparse.REMAINDER, help="options of the operator")
    p.set_defaults(func=run)


def _handlers() -> dict[str, Handler]:
    table = {"gpu": run_gpu, **OP_HANDLERS}
    for name in OPTIONAL_HANDLERS:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        table.setdefault(getattr(mod, "KIND", "system"), mod.run_argv)
    return table


def run(args: argparse.Namespace) -> int:
    """Dispatch on the machine's kind; print the result; exit code."""
    data, file = load_machine_dict(args.hw)
    kind = data.get("kind", "systolic")
    handlers = _handlers()
    if kind not in handlers:
        raise UnsupportedError(f"{file}: 'accelsim op' has no operators for machines of kind "
                               f"'{kind}' (it handles: {', '.join(sorted(handlers))})")
    return handlers[kind](args.hw, args.opname, list(args.rest))


def _gpu_parser(hw: str, op: str, systolic: bool = False) -> argparse.ArgumentParser:
    p = _ArgError(prog=f"accelsim op {hw} {op}")
    dims = {"gemm": ("m", "n", "k"), "conv2d": ("n", "c", "h", "w", "k", "r", "s"),
            "attention": ("batch", "heads", "seq", "head-dim"),
            "elementwise": ("rows", "cols")}
    key = op if op in dims else "elementwise"
    for d in dims[key]:
        p.add_argument(f"--{d}", type=int, required=True, help=f"{d} (> 0)")
    if op == "gemm":
        p.add_argument("--batch", type=int, default=1, help="independent GEMMs (default 1)")
        p.add_argument("--shared-weights", action="store_true",
                       help="one K x N matrix for the whole batch (a linear layer)")
    if op == "gemm" and not systolic:
        p.add_argument("--sparsity", default=None, choices=("dense", "2:4"),
                       help="2:4 structured-sparse weights (sparse tensor cores: Ampere and "
                            "later); default dense")
    if op == "conv2d":
        p.add_argument("--stride", type=int, default=1)
        p.add_argument("--pad", type=int, default=0)
    if op == "attention":
        p.add_argument("--seq-kv", type=int, help="key/value length (default --seq)")
        p.add_argument("--kv-heads", type=int, help="K/V heads (grouped-query attention)")
        p.add_argument("--causal", action="store_true")
    if systolic:
        p.add_argument("--dataflow", choices=("os", "ws", "is"),
                       help="dataflow (default: the machine's)")
        p.set_defaults(dtype="bf16")  # operand sizes come from the array's precision
    else:
        p.add_argument("--dtype", default="bf16", help="fp32, tf32, fp16, bf16, fp8 or int8")
    p.add_argument("--mode", default="event", choices=("event", "analytic"))
    p.add_argument("--json", action="store_true", help="print one JSON document")
    return p


def gpu_op(op: str, a: argparse.Namespace):
    """Build the workload operator of GPU op ``op`` from parsed options."""
    from accelsim.precision import PRECISION_BYTES
    from accelsim.workload.nn_ops import Attention, Elementwise, LayerNorm, Softmax
    from accelsim.workload.ops import Conv2d, Gemm

    if a.dtype not in PRECISION_BYTES:
        raise ConfigError("command line", "--dtype", a.dtype,
                          f"unknown precision (known: {', '.join(PRECISION_BYTES)})")
    for name, v in vars(a).items():
        if isinstance(v, int) and not isinstance(v, bool) and v is not None:
            flag = f"--{name.replace('_', '-')}"
            if v <= 0 and not (name == "pad" and v == 0):
                raise ConfigError("command line", flag, v, "must be > 0")
            check_number(v, file="command line", field=flag, integer=True, maximum=MAX_DIM)
    try:
        if op == "gemm":
            return Gemm(name="gemm", m=a.m, n=a.n, k=a.k, batch=a.batch,
                        shared_weights=a.shared_weights, dtype=a.dtype)
        if op == "conv2d":
            return Conv2d(name="conv2d", n=a.n, c=a.c, h=a.h, w=a.w, k=a.k, r=a.r, s=a.s,
                          stride=a.stride, pad=a.pad, dtype=a.dtype)
        if op == "attention":
            return Attention(name="attention", batch=a.batch, heads=a.heads, seq_q=a.seq,
                             seq_kv=a.seq_kv or a.seq, head_dim=a.head_dim,
                             kv_heads=a.kv_heads, causal=a.causal, dtype=a.dtype)
        if op == "layernorm":
            return LayerNorm(name="layernorm", rows=a.rows, cols=a.cols, dtype=a.dtype)
        if op == "softmax":
            return Softmax(name="softmax", rows=a.rows, cols=a.cols, dtype=a.dtype)
        return Elementwise(name=op, rows=a.rows, cols=a.cols, fn=op, dtype=a.dtype)
    except ValueError as exc:
        raise ConfigError(f"accelsim op {op}", op, None, str(exc)) from None


def run_gpu(hw: str, op: str, argv: list[str]) -> int:
    """``accelsim op GPU OPNAME ...``: simulate one operator, print JSON or one line."""
    from accelsim.api.gpu import simulate_op

    if op not in GPU_OPS:
        raise ConfigError(hw, "OPNAME", op, f"not a GPU operator (known: {', '.join(GPU_OPS)})")
    a = _gpu_parser(hw, op).parse_args(argv)
    doc = simulate_op(hw, gpu_op(op, a), mode=a.mode, precision=a.dtype,
                      sparsity=getattr(a, "sparsity", None))
    if a.json:
        print(json.dumps(doc, default=_jsonable))
    else:
        extra = f" tile={doc['tile']} waves={doc['waves']:.2f}" if doc.get("tile") else ""
        if doc.get("sparsity", "dense") != "dense":
            extra += f" sparsity={doc['sparsity']}"
        print(f"{doc['machine']} {op} {doc['precision']}: {scaled(doc['time_s'], 's')}, "
              f"{scaled(doc['flop_per_s'], 'flop_per_s')}, {scaled(doc['bytes'], 'bytes')}, "
              f"bound={doc['bound']}{extra}")
    return 0


def run_systolic(hw: str, op: str, argv: list[str]) -> int:
    """``accelsim op SYSTOLIC gemm|conv2d ...``: one layer on the array, JSON or one line."""
    from accelsim.api import simulate
    from accelsim.report.export import dumps

    if op not in SYSTOLIC_OPS:
        raise ConfigError(hw, "OPNAME", op, "not an operator of a systolic array (known: "
                          f"{', '.join(SYSTOLIC_OPS)}; whole models: accelsim run)")
    a = _gpu_parser(hw, op, systolic=True).parse_args(argv)
    r = simulate(hw, gpu_op(op, a), dataflow=a.dataflow, mode=a.mode)
    if a.json:
        print(dumps(r.to_dict()))
        return 0
    t, row = r.totals, r.layers.iloc[0]
    line = (f"{r.machine.name} {op} {r.machine.array.precision} {r.dataflow}: "
            f"m={row['m']:,} n={row['n']:,} k={row['k']:,}, {row['folds']:,} folds, "
            f"{t['total_cycles']:,} cycles = {scaled(t['time_s'], 's')}, "
            f"{scaled(t['flop_per_s'], 'flop_per_s')}, util {t['overall_util']:.1%}, "
            f"DRAM {scaled(t['dram_bytes'], 'bytes')}")
    if r.energy is not None and hasattr(r.energy, "summary"):
        line += f", energy {scaled(r.energy.summary['total_pj'], 'pj')}"
    print(line)
    return 0


OP_HANDLERS["systolic"] = run_systolic


def _jsonable(v: object) -> object:
    if isinstance(v, (tuple, set)):
        return list(v)
    return float(v) if hasattr(v, "__float__") else str(v)
