"""``accelsim op HW OPNAME [options]``: time one operator on one machine.

    accelsim op h200 gemm --m 4096 --n 4096 --k 4096 --dtype bf16 --json
    accelsim op h200 gemm --m 4096 --n 4096 --k 4096 --dtype fp16 --sparsity 2:4 --json
    accelsim op h200 conv2d --n 32 --c 64 --h 56 --w 56 --k 64 --r 3 --s 3 --pad 1 --json
    accelsim op h200 attention --batch 4 --heads 32 --seq 4096 --head-dim 128 --causal --json
    accelsim op h200 layernorm --rows 4096 --cols 4096 --dtype bf16 --json
    accelsim op tpu_v4 gemm --m 4096 --n 4096 --k 4096 [--dataflow os] --json
    accelsim op tpu_v4 conv2d --n 1 --c 64 --h 56 --w 56 --k 64 --r 3 --s 3 --pad 1

Each operator's options are derived from its fields in the op registry
(:func:`accelsim.workload.registry.cli_fields`: ``--<field>``, with the registry's few other
spellings such as ``--seq`` for attention's ``seq_q``); a new operator class registered there
gets its options, and a line in ``accelsim op --help``, for free.

Dispatch is by the machine's ``kind``: :data:`OP_HANDLERS` maps a kind to a handler
``(machine_name, op_name, argv) -> exit code``. ``gpu`` and ``systolic`` (``gemm`` and
``conv2d`` through :func:`accelsim.api.simulate`, at the array's precision) are handled here;
``system``
(copies and collectives: ``copy``, ``allreduce``, ``allgather``, ``reducescatter``,
``alltoall``) by the optional module ``accelsim.cli.op_links`` (its ``run_argv``), registered
when that module is present. A new kind adds one entry.

Imports: errors, limits, precision, api.gpu, api.simulate, config.registry, devices.gpu_op_program,
report.export, report.terminal, workload.registry.
"""

from __future__ import annotations

import argparse
import importlib
import json
from collections.abc import Callable

from accelsim.config.registry import load_machine_dict
from accelsim.errors import ConfigError, UnsupportedError
from accelsim.limits import MAX_DIM, check_number
from accelsim.report.terminal import scaled, wrap_clauses
from accelsim.workload.registry import (
    OP_PRESETS,
    OP_TYPES,
    CliField,
    cli_fields,
    cli_op_names,
    resolve_op_name,
)


def systolic_ops() -> list[str]:
    """Operator names a systolic machine accepts: the kinds that lower to a GEMM on the array.
    (A GPU accepts every name of :func:`accelsim.workload.registry.cli_op_names`; its model
    refuses, in one line, a kind it has no kernel for.)"""
    return [kind for kind, cls in OP_TYPES.items() if hasattr(cls, "lower")]

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
        description=__doc__.split("\n\n")[0] + "\n\nRun 'accelsim op HW OPNAME --help' "
        "for an op's options.", epilog=ops_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
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


def op_usage(kind: str) -> str:
    """One line of ``accelsim op --help``: an operator kind's options, from its fields
    (:func:`accelsim.workload.registry.cli_fields`): ``--m M`` required, ``[--batch 1]`` with
    its default, ``[--causal]`` a switch."""
    parts = []
    for f in cli_fields(kind):
        flag = "/".join(f.flags)
        if f.type == "bool":
            parts.append(f"[{flag}]")
        elif f.required:
            parts.append(f"{flag} {f.name.upper()}")
        elif f.default_from is not None:
            parts.append(f"[{flag} {f.name.upper()} (default {f.default_from})]")
        else:
            parts.append(f"[{flag} {f.name.upper() if f.default is None else f.default}]")
    return f"  {kind}: {' '.join(parts)}"


def ops_help() -> str:
    """The operators and their options, for ``accelsim op --help``."""
    lines = ["operators, their options from their fields (accelsim.workload.registry); every op "
             "also takes --mode event|analytic and --json, on a GPU --dtype, --sparsity and --exec "
             "eager|graph [--call CALL] (the op as users call it, back to back), on "
             f"a systolic array ({', '.join(systolic_ops())}) --dataflow:",
             *(op_usage(kind) for kind in OP_TYPES)]
    for kind in dict.fromkeys(k for k, _ in OP_PRESETS.values()):
        names = [n for n, (k, _) in OP_PRESETS.items() if k == kind and n not in OP_TYPES]
        preset = sorted({f for n in names for f in OP_PRESETS[n][1]})
        lines.append(f"  {', '.join(names)}: {kind} ops with {', '.join(preset)} = the name")
    return "\n".join(lines)


FIELD = "field_"
"""Prefix of the parsed operator fields (apart from the command's own options: a pool's
``mode`` is not ``--mode``)."""


def _field_help(f: CliField) -> str:
    if f.default_from is not None:
        return f"{f.name} (default: the {f.default_from} value)"
    if f.required:
        return f"{f.name} ({f.type}, required" + (", > 0)" if f.type == "int" else ")")
    return f"{f.name} ({f.type}, default {f.default})"


def op_parser(hw: str, op: str, systolic: bool = False) -> argparse.ArgumentParser:
    """The options of op name ``op`` (a kind or a preset, :mod:`accelsim.workload.registry`):
    one per field, then the machine kind's own (``--dtype`` and ``--sparsity`` on a GPU,
    ``--dataflow`` on a systolic array), ``--mode`` and ``--json``."""
    kind, preset = resolve_op_name(op)
    p = _ArgError(prog=f"accelsim op {hw} {op}")
    types = {"int": int, "float": float, "str": str}
    for f in cli_fields(kind):
        if f.name in preset:
            continue
        if f.type == "bool":
            p.add_argument(*f.flags, dest=FIELD + f.name, default=bool(f.default),
                           help=_field_help(f),
                           action=argparse.BooleanOptionalAction if f.default else "store_true")
        else:
            p.add_argument(*f.flags, dest=FIELD + f.name, metavar=f.name.upper(),
                           type=types[f.type], required=f.required, default=f.default,
                           help=_field_help(f))
    if systolic:
        p.add_argument("--dataflow", choices=("os", "ws", "is"),
                       help="dataflow (default: the machine's)")
        p.set_defaults(dtype="bf16")  # operand sizes come from the array's precision
    else:
        p.add_argument("--sparsity", default=None, choices=("dense", "2:4"),
                       help="2:4 structured-sparse weights (GEMMs on sparse tensor cores: "
                            "Ampere and later); default dense")
        p.add_argument("--dtype", default="bf16", help="fp32, tf32, fp16, bf16, fp8 or int8")
    p.add_argument("--mode", default="event", choices=("event", "analytic"))
    p.add_argument("--exec", dest="exec_mode", default=None, metavar="MODE",
                   help="time the op as users call it, back to back: eager (the host "
                        "dispatches every call) or graph (the calls replayed in one CUDA "
                        "graph); default: the GPU's kernels alone" if not systolic else
                        "GPUs only (an execution mode is how a framework's host issues calls "
                        "to a GPU)")
    p.add_argument("--call", default=None, metavar="CALL",
                   help="with --exec: the call users make (gemm: nn.Linear, F.linear or "
                        "matmul; conv2d: nn.Conv2d or F.conv2d; layernorm: nn.LayerNorm, "
                        "F.layer_norm, F.rms_norm or nn.RMSNorm; default the first)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    return p


def build_op(op: str, a: argparse.Namespace) -> object:
    """The workload operator that op name ``op`` and its parsed options describe; a bad value
    is a one-line :class:`ConfigError` naming the option."""
    from accelsim.precision import PRECISION_BYTES

    if a.dtype not in PRECISION_BYTES:
        raise ConfigError("command line", "--dtype", a.dtype,
                          f"unknown precision (known: {', '.join(PRECISION_BYTES)})")
    kind, preset = resolve_op_name(op)
    fields = [f for f in cli_fields(kind) if f.name not in preset]
    values = {f.name: getattr(a, FIELD + f.name) for f in fields}
    for f in fields:
        v = values[f.name]
        if f.type == "int" and v is not None:
            if v < f.min_value:
                raise ConfigError("command line", f.flags[0], v,
                                  f"must be {'> 0' if f.min_value == 1 else f'>= {f.min_value}'}")
            check_number(v, file="command line", field=f.flags[0], integer=True, maximum=MAX_DIM)
    for f in fields:
        if f.default_from is not None and values[f.name] is None:
            values[f.name] = values[f.default_from]
    try:
        return OP_TYPES[kind](name=op, **preset, **values, dtype=a.dtype)
    except ValueError as exc:
        raise ConfigError(f"accelsim op {op}", op, None, str(exc)) from None


def run_gpu(hw: str, op: str, argv: list[str]) -> int:
    """``accelsim op GPU OPNAME ...``: simulate one operator, print JSON or one line."""
    from accelsim.api.gpu import simulate_op

    known = cli_op_names()
    if op not in known:
        raise ConfigError(hw, "OPNAME", op, f"not a GPU operator (known: {', '.join(known)})")
    a = op_parser(hw, op).parse_args(argv)
    if a.exec_mode is not None:
        from accelsim.devices.gpu_op_program import check_exec

        check_exec(a.exec_mode)
    doc = simulate_op(hw, build_op(op, a), mode=a.mode, precision=a.dtype, sparsity=a.sparsity,
                      exec=a.exec_mode, call=a.call)
    if a.json:
        print(json.dumps(doc, default=_jsonable))
    else:
        tile = "x".join(map(str, doc.get("tile") or ()))  # M x N x K of the CTA tile
        extra = f" tile={tile} waves={doc['waves']:.2f}" if tile else ""
        if doc.get("sparsity", "dense") != "dense":
            extra += f" sparsity={doc['sparsity']}"
        if "exec" in doc:
            extra += (f" exec={doc['exec']} call={doc['call']} host={scaled(doc['host_s'], 's')}"
                      f" gpu={scaled(doc['gpu_s'], 's')}")
        print(_wrap(f"{doc['machine']} {op} {doc['precision']}: {scaled(doc['time_s'], 's')}, "
                   f"{scaled(doc['flop_per_s'], 'flop_per_s')}, "
                   f"{scaled(doc['bytes'], 'bytes')}, bound={doc['bound']}{extra}"))
    return 0


def run_systolic(hw: str, op: str, argv: list[str]) -> int:
    """``accelsim op SYSTOLIC gemm|conv2d ...``: one layer on the array, JSON or one line."""
    from accelsim.api import simulate
    from accelsim.report.export import dumps

    known = systolic_ops()
    if op not in known:
        raise ConfigError(hw, "OPNAME", op, "not an operator of a systolic array (known: "
                          f"{', '.join(known)}; whole models: accelsim run)")
    a = op_parser(hw, op, systolic=True).parse_args(argv)
    if a.exec_mode is not None or a.call is not None:
        flag = "--exec" if a.exec_mode is not None else "--call"
        raise UnsupportedError(f"{hw}: {flag} times an op as a framework's host issues it to a "
                               "GPU; a systolic array runs the op as one layer (no --exec)")
    r = simulate(hw, build_op(op, a), dataflow=a.dataflow, mode=a.mode)
    if a.json:
        print(dumps(r.to_dict()))
        return 0
    t, row = r.totals, r.layers.iloc[0]
    cores = r.machine.compute.cores
    per_core = f" per core ({cores} cores)" if cores > 1 else ""
    line = (f"{r.machine.name} {op} {r.machine.array.precision} {r.dataflow}: "
            f"m={row['m']:,} n={row['n']:,} k={row['k']:,}{per_core}, {row['folds']:,} folds, "
            f"{t['total_cycles']:,} cycles = {scaled(t['time_s'], 's')}, "
            f"{scaled(t['flop_per_s'], 'flop_per_s')}, util {t['overall_util']:.1%}, "
            f"DRAM {scaled(t['dram_bytes'], 'bytes')}")
    if r.energy is not None and hasattr(r.energy, "summary"):
        line += f", energy {scaled(r.energy.summary['total_pj'], 'pj')}"
    print(_wrap(line))
    return 0


OP_HANDLERS["systolic"] = run_systolic


def _wrap(line: str) -> str:
    """``line`` within 120 columns, broken after a comma (continuations indented)."""
    return "\n".join(wrap_clauses(line, 120))


def _jsonable(v: object) -> object:
    if isinstance(v, (tuple, set)):
        return list(v)
    return float(v) if hasattr(v, "__float__") else str(v)
