"""``accelsim sweep SPEC.yaml --out results.parquet [--workers N] [--scheduler ADDRESS]
[--resume]``.

Evaluates every design point of a sweep spec (see :mod:`accelsim.sweep.space`) and writes one
row per point (parameters, metrics, ``point_id``) to Parquet or CSV, incrementally. Local
processes on all cores by default; ``--scheduler`` runs the same sweep on a Dask cluster.
Ctrl-C leaves a valid file; ``--resume`` skips the points already in it.

Imports: errors, safe_text, limits, sweep.runner.
"""

from __future__ import annotations

import argparse
import sys

from accelsim.errors import ConfigError
from accelsim.limits import MAX_WORKERS
from accelsim.safe_text import show


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``sweep`` subcommand."""
    p = subparsers.add_parser(
        "sweep", help="evaluate a design-space sweep (local processes or a Dask cluster)",
        description="Evaluate every point of a sweep spec YAML and write one row per point.")
    p.add_argument("spec", metavar="SPEC.yaml", help="sweep spec (see accelsim/sweep/README.md)")
    p.add_argument("--out", required=True, metavar="FILE",
                   help="results file (.parquet, or .csv; see --format)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="local worker processes (default: all cores; 1 = in this process)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run on a Dask distributed scheduler, e.g. tcp://host:8786")
    p.add_argument("--resume", action="store_true",
                   help="continue an existing results file, skipping finished points")
    p.add_argument("--force", action="store_true", help="replace an existing results file")
    p.add_argument("--format", choices=("parquet", "csv"), default=None,
                   help="file format (default: from the --out suffix; parquet unless .csv)")
    p.add_argument("--evaluator", default=None, metavar="MODULE:FUNCTION",
                   help="evaluate points with FUNCTION(ctx, point) -> {metric: value} from an "
                        "importable MODULE instead of accelsim's simulator")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the sweep; print a one-line summary."""
    from accelsim.sweep.runner import run_sweep

    if args.workers is not None and not 1 <= args.workers <= MAX_WORKERS:
        raise ConfigError("command line", "--workers", args.workers,
                          f"must be within 1..{MAX_WORKERS}")
    if args.resume and args.force:
        raise ConfigError("command line", "--resume", "--force",
                          "choose one of --resume and --force")
    evaluator = _import_evaluator(args.evaluator) if args.evaluator else None
    summary = run_sweep(args.spec, args.out, workers=args.workers, scheduler=args.scheduler,
                        resume=args.resume, force=args.force, fmt=args.format,
                        evaluator=evaluator, progress=not args.quiet)
    print(show(summary.line()), file=sys.stderr)
    return 0


def _import_evaluator(text: str):
    """``package.module:function`` -> the function (one-line error if it cannot be imported)."""
    import importlib
    import inspect

    module, _, name = text.partition(":")
    if not module or not name:
        raise ConfigError("command line", "--evaluator", text, "expected MODULE:FUNCTION")
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError("command line", "--evaluator", text, f"cannot import ({exc})") from None
    if not callable(fn):
        raise ConfigError("command line", "--evaluator", text, "not a function")
    try:
        inspect.signature(fn).bind(None, None)
    except TypeError:
        raise ConfigError("command line", "--evaluator", text,
                          "must take two arguments: FUNCTION(ctx, point)") from None
    except ValueError:  # a builtin without a signature: left to the first call
        pass
    return fn
