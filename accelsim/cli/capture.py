"""``accelsim capture FILE.py:FACTORY [NAME=VALUE ...] -o prog.json``: capture a PyTorch program.

``FACTORY`` is a function in ``FILE.py`` that builds the model on the device it is given and
returns ``(callable, args)`` or ``(callable, args, kwargs)``: one step of the program
(``workloads/programs/plain.py`` has four). It is called with ``device="meta"`` (no memory,
no weights) and the ``NAME=VALUE`` parameters (integers, floats, ``true``/``false`` or text);
the program it runs is recorded at the torch-function level
(:mod:`accelsim.workload.torch_capture`) and written as JSON, which ``accelsim run HW
prog.json`` runs on any machine. The file is the user's own code and runs as Python.

``accelsim capture --from-trace TRACE.json.gz -o prog.json`` writes the program a
torch.profiler (Kineto) trace's step stands for (:mod:`accelsim.workload.kineto`; no torch
needed; the trace's measured host times stay in the trace, and a GEMM's inner copies, whose
dispatch a trace replay counts in their GEMM's, pay the ``copy`` host class as calls of their
own).

Imports: errors, files, workload.kineto, workload.program_ops, workload.torch_capture.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

from accelsim.errors import AccelsimError, ConfigError
from accelsim.files import locate


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``capture`` subcommand."""
    p = sub.add_parser("capture",
                       help="capture a PyTorch program (needs torch) into a program file",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("target", metavar="FILE.py:FACTORY", nargs="?",
                   help="a Python file and the factory in it that returns (callable, args)")
    p.add_argument("--from-trace", metavar="TRACE.json[.gz]",
                   help="convert a torch.profiler (Kineto) trace instead (no torch needed; "
                        "its measured host times are not kept: `accelsim run HW "
                        "TRACE:host=measured` replays them)")
    p.add_argument("params", nargs="*", metavar="NAME=VALUE",
                   help="keyword arguments for the factory (e.g. batch=8 context=4096)")
    p.add_argument("-o", "--out", required=True, metavar="PROG.json",
                   help="the program file to write")
    p.set_defaults(func=run)


def _value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _params(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.isidentifier():
            raise ConfigError("command line", "NAME=VALUE", item,
                              "expected NAME=VALUE with a Python identifier as NAME")
        if key in out:
            raise ConfigError("command line", key, item, "given twice")
        out[key] = _value(value)
    return out


def _factory(target: str) -> Any:
    file, sep, name = target.rpartition(":")
    if not sep or not file.endswith(".py") or not name.isidentifier():
        raise ConfigError("command line", "FILE.py:FACTORY", target,
                          "expected a Python file and a function name, e.g. model.py:build")
    path = locate(file)  # the built-in examples (workloads/programs/) from any folder
    if not path.is_file():
        raise ConfigError("command line", "FILE.py", file, "no such file")
    spec = importlib.util.spec_from_file_location(f"_accelsim_capture_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.resolve().parent))
    try:
        spec.loader.exec_module(module)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] == "torch":
            raise ConfigError(file, None, None, "capturing needs PyTorch: pip install "
                              "'accelsim[torch]' (a CPU build is enough: programs are "
                              "captured on the meta device)") from None
        raise ConfigError(file, None, None, f"importing it failed: {exc}") from None
    except Exception as exc:  # noqa: BLE001 (the user's file: one line)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise ConfigError(file, None, None, f"importing it failed: {type(exc).__name__}: "
                          f"{first}") from None
    finally:
        sys.path.pop(0)
    fn = getattr(module, name, None)
    if not callable(fn):
        raise ConfigError(file, name, None, "no such function in the file")
    return fn


def run(args: argparse.Namespace) -> int:
    """Capture the program and write it."""
    from accelsim.files import write_output
    from accelsim.workload.torch_capture import capture_program

    if (args.target is None) == (args.from_trace is None):
        raise ConfigError("command line", "FILE.py:FACTORY", args.target,
                          "give a factory to capture or --from-trace TRACE, one of the two")
    if args.from_trace is not None:
        if args.params:
            raise ConfigError("command line", "NAME=VALUE", args.params[0],
                              "a trace takes no factory arguments")
        return _from_trace(args.from_trace, args.out)
    factory = _factory(args.target)
    params = _params(args.params)
    try:
        built = factory(device="meta", **params)
    except (TypeError, ValueError) as exc:
        raise ConfigError(args.target, None, None, f"the factory refused its arguments: "
                          f"{(str(exc).splitlines() or [''])[0][:300]}") from None
    except Exception as exc:  # noqa: BLE001 (the user's factory failed: one line)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise ConfigError(args.target, None, None,
                          f"the factory failed: {type(exc).__name__}: {first}") from None
    if not isinstance(built, tuple) or len(built) not in (2, 3) or not callable(built[0]):
        raise ConfigError(args.target, None, type(built).__name__,
                          "the factory must return (callable, args) or (callable, args, kwargs)")
    fn = built[0]
    # the example inputs: a tuple or list of them, or one value standing alone (a lone
    # tensor is one argument, not unpacked along its first dimension)
    fargs = tuple(built[1]) if isinstance(built[1], (tuple, list)) else (built[1],)
    if len(built) == 3 and not isinstance(built[2], dict):
        raise ConfigError(args.target, "kwargs", type(built[2]).__name__,
                          "the factory's third value must be a dict of keyword arguments")
    fkwargs = dict(built[2]) if len(built) == 3 else {}
    label = Path(args.target.rpartition(":")[0]).stem + "." + args.target.rpartition(":")[2]
    try:
        program = capture_program(fn, *fargs, name=label, **fkwargs)
    except AccelsimError:
        raise
    except Exception as exc:  # noqa: BLE001 (the user's program failed while captured)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise ConfigError(args.target, None, None, f"the program failed while captured: "
                          f"{type(exc).__name__}: {first}") from None
    write_output(args.out, program.to_text())
    _summary(program, args.target, args.out)
    return 0


def _from_trace(trace: str, out: str) -> int:
    """Write the program a Kineto trace's step stands for."""
    from accelsim.files import write_output
    from accelsim.workload.kineto import read_trace

    program = read_trace(trace).program
    write_output(out, program.to_text())
    _summary(program, trace, out)
    return 0


def _summary(program: Any, source: str, out: str) -> None:
    from accelsim.workload.program_ops import call_sites, unmodelled_calls

    sites = call_sites(program)
    kernels = sum(1 for s in sites if s.op is not None)
    print(f"captured {len(program.calls)} calls ({kernels} that compute) from {source} "
          f"with {program.framework}; wrote {out}")
    missing = unmodelled_calls(program)
    if missing:
        listed = ", ".join(f"{k} x{v}" for k, v in sorted(missing.items()))
        print(f"unmodelled calls (costed as one stream kernel over their tensors): {listed}")
