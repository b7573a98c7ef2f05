"""Capture the program a user runs: ``capture(fn, *example_args, **example_kwargs)``.

    >>> import torch
    >>> from accelsim.api import capture, simulate
    >>> with torch.device("meta"):
    ...     model = MyModel().to(torch.bfloat16)
    ...     x = torch.zeros(8, 1, 4096, dtype=torch.bfloat16)
    >>> wl = capture(model, x)                 # a Workload: the ops its calls compute
    >>> wl.program.write("prog.json")          # a file `accelsim run HW prog.json` runs
    >>> simulate("h200", wl, exec_mode="graph")

``fn`` is any callable (an ``nn.Module``, its ``forward``, a plain function); example tensors
may live on the ``meta`` device. The result is a
:class:`~accelsim.workload.program_ops.CapturedWorkload`: its ``ops`` run on every machine
kind, its ``program`` (the recorded torch-function calls) is what a GPU's execution-mode
lowering reads (``configs/lowering/*.yaml`` ``call.*`` entries). Calls the lowering does not
know are listed by :func:`~accelsim.workload.program_ops.unmodelled_calls`.

Imports: workload.program_ops, workload.torch_capture.
"""

from __future__ import annotations

from typing import Any

from accelsim.workload.program_ops import CapturedWorkload, program_workload, unmodelled_calls
from accelsim.workload.torch_capture import capture_program


def capture(fn: Any, *example_args: Any, **example_kwargs: Any) -> CapturedWorkload:
    """The workload of one call ``fn(*example_args, **example_kwargs)`` (see module doc)."""
    return program_workload(capture_program(fn, *example_args, **example_kwargs))


__all__ = ["CapturedWorkload", "capture", "unmodelled_calls"]
