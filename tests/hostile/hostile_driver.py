"""Run hostile cases in one process under an address-space limit; one JSON line per case.

    python hostile_driver.py WORKDIR LIMIT_GB TIMEOUT_S [CASE_ID ...]

Each case runs ``accelsim.cli.main(argv)`` in this process (imports and JIT compilation are
paid once), with stdout and stderr captured, under ``RLIMIT_AS = LIMIT_GB`` for the whole
process and ``TIMEOUT_S`` per case (SIGALRM). An exception that escapes ``main`` is what a
user would see as a traceback; it is reported as ``"traceback"`` with its type and message.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import signal
import sys
import time
import traceback
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from hostile_corpus import all_cases  # noqa: E402


class CaseTimeout(BaseException):
    """Raised by SIGALRM when a case runs past its time budget."""


def _alarm(signum, frame):  # noqa: ARG001
    raise CaseTimeout()


def write_files(case, d: Path) -> None:
    """Write the case's files under ``d`` (``{d}`` in text bodies becomes ``d``)."""
    for rel, body in case.files.items():
        p = d / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if callable(body):
            body(p)
        elif isinstance(body, bytes):
            p.write_bytes(body)
        else:
            p.write_text(body.replace("{d}", str(d)))


def run_case(case, workdir: Path, timeout_s: float) -> dict:
    """Run one case in this process; the result record."""
    from accelsim.cli import main

    d = workdir / case.id.replace("/", "__").replace(" ", "_")
    d.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(d))  # --evaluator modules written for the case
    write_files(case, d)
    argv = [a.replace("{d}", str(d)) for a in case.argv]
    out, err = io.StringIO(), io.StringIO()
    rec: dict = {"id": case.id, "argv": argv}
    t0 = time.monotonic()
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                warnings.catch_warnings():
            warnings.simplefilter("default")
            try:
                rec["rc"] = main(argv)
            except SystemExit as exc:
                rec["rc"] = exc.code if isinstance(exc.code, int) else 1
    except CaseTimeout:
        rec["rc"] = "timeout"
    except BaseException as exc:  # what a user would see as a traceback
        rec["rc"] = "traceback"
        tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
        rec["traceback"] = "".join(tb)[-3000:]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.path.remove(str(d))
    rec["wall_s"] = round(time.monotonic() - t0, 3)
    rec["stderr"] = err.getvalue()[-4000:]
    rec["stdout_chars"] = len(out.getvalue())
    return rec


def main() -> None:
    """Entry point (see the module docstring)."""
    workdir, limit_gb, timeout_s = Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    wanted = set(sys.argv[4:])
    limit = int(limit_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    os.environ.setdefault("MPLBACKEND", "Agg")
    for case in all_cases():
        if wanted and case.id not in wanted:
            continue
        rec = run_case(case, workdir, timeout_s)
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
