"""The one measurement harness of ``scripts/measure/``: command line, timing loops, profiling,
sections, JSON writing with machine/software metadata, and printing.

Every measurement script imports it (``sys.path`` holds this folder) instead of writing its
own loop, so every data set of ``scripts/data/`` is timed by the same code:

* **command line** (:func:`cli`): ``python3 scripts/measure/NAME.py [flags] [OUT]``: ``OUT``
  the output folder (default ``$OUT`` or ``.``), ``--help`` the script's docstring; nothing
  touches CUDA before it returns;
* **warm-up rule** (:func:`warm_up`): ``n`` calls, then a synchronise, before any timed call;
* **host clock** (:func:`step_seconds`, :func:`host_calls_s`): ``perf_counter`` around calls,
  a synchronise before (and after, where stated);
* **CUDA events** (:func:`event_time_s`, :func:`event_batches_s`, :func:`back_to_back_ms`):
  GPU-side seconds of calls queued back to back between two events;
* **CUDA graphs** (:func:`graph_of`, :func:`graph_ms`): capture after two calls on a side
  stream, time the replay with events;
* the recipes built from those: :func:`time_op` (a single op as users call it: eager and
  graph per-call seconds and its kernels, as ``e2e.py`` run 1 defined) and :func:`timed`
  (the held-out set's ``eager_ms``/``graph_ms``/``gpu_ms``);
* **profiling** (:func:`profile_call`, :func:`profile_kernels`, :func:`kernel_events`,
  :func:`trace_events`): one ``torch.profiler`` run after a warm call;
* **sections** (:func:`run_sections`): each measurement independent, its error recorded under
  ``errors``, its seconds under ``seconds``, the file rewritten after each;
* **JSON** (:func:`write_json`): the document with a ``meta`` object (:func:`metadata`: script,
  arguments, ``MEASURE_*``/``NCCL_*`` settings, start time, GPU, CPU, library versions),
  written to a temporary name and renamed, so a cut run leaves a whole file;
* **printing** (:func:`say`): one flushed line per result (the device machine's output is
  read while the script runs).

Units: seconds unless a name says ``_ms`` or ``_us``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable

import torch

OUT = os.environ.get("OUT", ".")
"""The output folder; :func:`cli` sets it from the command line."""
STARTED = time.time()
_CUDA: bool | None = None
_META: dict | None = None


# ----------------------------------------------------------------------------- command line
def cli(doc: str, argv: list[str] | None = None,
        flags: Iterable[tuple[str, str]] = ()) -> argparse.Namespace:
    """Parse ``[flags] [OUT]`` (``flags``: ``(--name, help)`` switches); ``--help`` prints
    ``doc``. Sets :data:`OUT` and creates the folder."""
    global OUT
    parser = argparse.ArgumentParser(
        prog=os.path.basename(sys.argv[0]) or None, description=doc,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?", default=os.environ.get("OUT", "."),
                        help="output folder (default: $OUT or .)")
    for flag, text in flags:
        parser.add_argument(flag, action="store_true", help=text)
    args = parser.parse_args(argv)
    OUT = args.out
    os.makedirs(OUT, exist_ok=True)
    return args


def out_path(name: str) -> str:
    """``name`` in the output folder."""
    return os.path.join(OUT, name)


def say(*parts) -> None:
    """Print one line now (flushed)."""
    print(*parts, flush=True)


# ----------------------------------------------------------------------------- devices
def has_cuda() -> bool:
    """Whether a CUDA device is there (asked once: the answer sits inside timing loops)."""
    global _CUDA
    if _CUDA is None:
        _CUDA = torch.cuda.is_available()
    return _CUDA


QUICK = os.environ.get("MEASURE_QUICK") == "1"
"""``MEASURE_QUICK=1``: a script's smoke-test mode (tiny shapes, few rounds), not a measurement."""


def device_and_dtype() -> tuple[str, str]:
    """Where a measurement runs and in which precision name: ``("cuda", "bf16")`` on a GPU,
    ``("cpu", "fp32")`` otherwise (a smoke test)."""
    return ("cuda", "bf16") if has_cuda() else ("cpu", "fp32")


def plain_programs():
    """``workloads/programs/plain.py``, the plain PyTorch programs (imported from the
    repository's tree: the measurement scripts run from a checkout, not an install)."""
    here = os.path.dirname(os.path.abspath(__file__))
    programs = os.path.join(here, "..", "..", "workloads", "programs")
    if programs not in sys.path:
        sys.path.insert(0, programs)
    import plain

    return plain


def sync() -> None:
    """Wait for the GPU (nothing on CPU)."""
    if has_cuda():
        torch.cuda.synchronize()


def empty_cache() -> None:
    if has_cuda():
        torch.cuda.empty_cache()


def device_info() -> dict:
    """``{"name", "torch", "cuda"}`` as the data files' ``device`` object writes it."""
    if not has_cuda():
        return {"torch": torch.__version__}
    return {"name": torch.cuda.get_device_name(), "torch": torch.__version__,
            "cuda": torch.version.cuda}


def laid_out(t, layout: str):
    """A tensor or module in ``layout``: ``channels_last`` or as it is (``nchw``)."""
    return t.to(memory_format=torch.channels_last) if layout == "channels_last" else t


# ----------------------------------------------------------------------------- host clock
def warm_up(fn: Callable, calls: int) -> None:
    """The warm-up rule: ``calls`` calls of ``fn``, then a synchronise."""
    for _ in range(calls):
        fn()
    sync()


def step_seconds(fn: Callable, steps: int, warm: int = 2) -> list[float]:
    """Wall seconds of each of ``steps`` calls of ``fn`` after ``warm`` calls, a
    synchronise before and after each (as ``generate`` runs a step); no profiler involved."""
    warm_up(fn, warm)
    ts = []
    for _ in range(steps):
        sync()
        t = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t)
    return ts


def time_steps(fn: Callable, steps: int, warm: int = 2) -> dict:
    """Per-step wall time with a synchronise after each step (:func:`step_seconds`)."""
    ts = step_seconds(fn, steps, warm)
    return {"median_s": statistics.median(ts), "min_s": min(ts), "steps": steps,
            "all_s": [round(t, 7) for t in ts]}


def host_calls_s(fn: Callable, calls: int) -> tuple[float, float]:
    """Per-call host seconds of ``calls`` calls issued back to back after a synchronise:
    ``(issue_s, drained_s)``, the second with the synchronise after the calls included."""
    sync()
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    issued = time.perf_counter() - t
    sync()
    return issued / calls, (time.perf_counter() - t) / calls


def tiny_host_classes(device: str, dtype, calls: int, rounds: int,
                      extra: dict[str, Callable] | None = None) -> dict[str, float]:
    """A session's host classes on tiny tensors: per-call host seconds of ``nn.Linear``,
    ``F.layer_norm`` and ``torch.add`` (64 features, 4 rows) on ``device``, each issued
    ``calls`` times back to back after 20 warm calls, ``rounds`` interleaved rounds, medians
    (``extra``: more callables timed the same way). Set beside ``host.eager_call_s``, they
    say how fast the session's host runs."""
    lin = torch.nn.Linear(64, 64, device=device, dtype=dtype)
    x = torch.randn(4, 64, device=device, dtype=dtype)
    w = torch.ones(64, device=device, dtype=dtype)
    b = torch.zeros(64, device=device, dtype=dtype)
    fns = {"linear": lambda: lin(x),
           "f_layer_norm": lambda: torch.nn.functional.layer_norm(x, (64,), w, b),
           "elementwise": lambda: torch.add(x, x), **(extra or {})}
    per: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            warm_up(fn, 20)
            per[k].append(host_calls_s(fn, calls)[0])
    return {k: statistics.median(v) for k, v in per.items()}


# ----------------------------------------------------------------------------- CUDA events
def event_time_s(fn: Callable, calls: int = 1) -> float:
    """GPU-side seconds of ``fn()`` between two CUDA events, divided by ``calls``."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / calls


def repeat(fn: Callable, n: int) -> Callable:
    """A callable running ``fn`` ``n`` times."""
    def run():
        for _ in range(n):
            fn()
    return run


def event_batches_s(fn: Callable, calls: int, batches: int = 5,
                    before: Callable | None = None) -> list[float]:
    """Per-call seconds of ``batches`` batches of ``calls`` calls queued back to back between
    two CUDA events (``before()``, e.g. a barrier, and a synchronise ahead of each batch)."""
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(batches):
        if before is not None:
            before()
        torch.cuda.synchronize()
        s.record()
        for _ in range(calls):
            fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e) / 1e3 / calls)
    return ts


def back_to_back_ms(fn: Callable, min_batch_ms: float = 2.0, batches: int = 7) -> float:
    """Median per-call milliseconds of calls queued back to back between CUDA events, the
    batch grown x4 until it lasts ``min_batch_ms`` (at most 1024 calls), after 3 warm calls
    (the held-out set's ``eager_ms``)."""
    warm_up(fn, 3)
    reps = 1
    while event_batches_s(fn, reps, 1)[0] * reps * 1e3 < min_batch_ms and reps < 1024:
        reps *= 4
    return statistics.median(event_batches_s(fn, reps, batches)) * 1e3


def graph_rounds_s(replays: list[Callable], calls: int, rounds: int) -> list[list[float]]:
    """Per-call GPU seconds of each CUDA-graph replay of ``calls`` calls, in ``rounds``
    interleaved rounds (each replay warmed once ahead of its timing): one list per replay."""
    per: list[list[float]] = [[] for _ in replays]
    for i in range(rounds):
        for times, replay in zip(per, replays, strict=True):
            replay()
            times.append(event_time_s(replay, calls))
        say(f"round {i} done")
    return per


# ----------------------------------------------------------------------------- CUDA graphs
def graph_of(fn: Callable) -> Callable:
    """Capture ``fn`` into a CUDA graph (after two calls on a side stream); returns the replay
    callable."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g.replay


def graph_ms(fn: Callable, n: int = 50) -> float:
    """Per-call milliseconds of ``n`` calls captured in one CUDA graph, the replay timed by
    :func:`back_to_back_ms` (1 ms batches, 5 of them)."""
    return back_to_back_ms(graph_of(repeat(fn, n)), min_batch_ms=1.0, batches=5) / n


# ----------------------------------------------------------------------------- collectives
COLLECTIVES = ("allreduce", "allgather", "reducescatter", "alltoall")


def reps_for(nbytes: int) -> int:
    """Calls per timed batch of a copy or collective of ``nbytes``: 50 up to 4 MiB, 10 up to
    64 MiB, else 4."""
    return 50 if nbytes <= 2 ** 22 else (10 if nbytes <= 2 ** 26 else 4)


def collective_call(dist, op: str, nbytes: int, world: int) -> tuple[Callable, int]:
    """One bf16 collective of ``op`` (:data:`COLLECTIVES`) on a full buffer of ``nbytes`` per
    rank (all-reduce: the tensor; all-gather: the gathered output; reduce-scatter: the
    input; all-to-all: the send buffer), as ``(callable, elements)``; ``elements`` is a
    multiple of ``world`` (0: nothing to time)."""
    n = nbytes // 2
    n -= n % world
    x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    if op == "allreduce":
        return (lambda: dist.all_reduce(x)), n
    if op == "allgather":
        part = torch.randn(n // world, device="cuda", dtype=torch.bfloat16)
        return (lambda: dist.all_gather_into_tensor(x, part)), n
    if op == "reducescatter":
        part = torch.empty(n // world, device="cuda", dtype=torch.bfloat16)
        return (lambda: dist.reduce_scatter_tensor(part, x)), n
    y = torch.empty_like(x)
    return (lambda: dist.all_to_all_single(y, x)), n


def collective_s(dist, fn: Callable, reps: int) -> float:
    """Median per-call seconds of ``reps`` collectives queued back to back between CUDA
    events, 5 batches, a barrier before each, after 5 warm calls (the held-out method)."""
    warm_up(fn, 5)
    return statistics.median(event_batches_s(fn, reps, 5, before=dist.barrier))


def bus_factor(op: str, world: int) -> float:
    """nccl-tests' bus bandwidth factor: all-reduce 2(n-1)/n, the others (n-1)/n."""
    return (2.0 if op == "allreduce" else 1.0) * (world - 1) / world


# ----------------------------------------------------------------------------- recipes
def time_op(fn: Callable, reps: int) -> dict:
    """Per-call time as users call an op: eager back to back (CUDA events around ``reps``
    calls, median of 5) and inside a CUDA graph of ``reps`` calls, after 3 warm calls; with
    the kernels one call launches. On CPU: host seconds of ``reps`` calls."""
    out: dict = {}
    if has_cuda():
        warm_up(fn, 3)
        out["eager_s"] = statistics.median(event_time_s(repeat(fn, reps), reps)
                                           for _ in range(5))
        try:
            rep = graph_of(repeat(fn, reps))
            out["graph_s"] = statistics.median(event_time_s(rep, reps) for _ in range(5))
        except Exception as e:  # noqa: BLE001
            out["graph_error"] = repr(e)[:200]
    else:
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        out["eager_s"] = (time.perf_counter() - t) / reps
    out["kernels"] = profile_kernels(fn)["kernels"]
    return out


def timed(fn: Callable, flops: float = 0.0, nbytes: float = 0.0, **meta) -> dict:
    """The held-out set's timing: ``eager_ms`` (:func:`back_to_back_ms`), ``graph_ms`` for calls
    under 0.5 ms (:func:`graph_ms`, 50 calls a graph under 0.1 ms, else 10), ``gpu_ms`` the
    graph time where there is one; ``tflops``/``GBps`` from ``flops``/``nbytes``."""
    e = back_to_back_ms(fn)
    r = dict(meta)
    r["eager_ms"] = e
    if e < 0.5:
        try:
            r["graph_ms"] = graph_ms(fn, n=50 if e < 0.1 else 10)
        except Exception as ex:  # noqa: BLE001 - some ops cannot be captured
            r["graph_error"] = str(ex)[:200]
    r["gpu_ms"] = r.get("graph_ms", e)
    if flops:
        r["flops"] = flops
        r["tflops"] = flops / (r["gpu_ms"] * 1e-3) / 1e12
    if nbytes:
        r["bytes"] = nbytes
        r["GBps"] = nbytes / (r["gpu_ms"] * 1e-3) / 1e9
    return r


# ----------------------------------------------------------------------------- profiling
def profile_call(fn: Callable, *, cpu: bool = True, record_shapes: bool = False,
                 calls: int = 1, warm: int = 1):
    """``torch.profiler`` over ``calls`` calls of ``fn`` (and a synchronise) after
    ``warm`` calls; CPU activity if ``cpu``, CUDA where there is a GPU. Returns
    ``(profiler, wall_s)``: ``wall_s`` the host seconds of the profiled calls."""
    from torch.profiler import ProfilerActivity, profile

    acts = ([ProfilerActivity.CPU] if cpu or not has_cuda() else []) + (
        [ProfilerActivity.CUDA] if has_cuda() else [])
    warm_up(fn, warm)
    with profile(activities=acts, record_shapes=record_shapes) as prof:
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        wall = time.perf_counter() - t
    return prof, wall


def profiled_events(fn: Callable) -> list:
    """``torch.profiler`` events (CPU and CUDA) of one call of ``fn``, after one warm call."""
    return list(profile_call(fn)[0].events())


def is_kernel(event) -> bool:
    """A GPU kernel event (not a launch or graph API call)."""
    return "CUDA" in str(getattr(event, "device_type", "")) and not event.name.startswith(
        ("cudaLaunch", "cudaGraph"))


def profile_kernels(fn: Callable) -> dict:
    """GPU kernels (name, duration) and CPU aten-op count of one call of ``fn``."""
    kernels, aten = [], 0
    for e in profiled_events(fn):
        if is_kernel(e):
            kernels.append([e.name[:160], round(e.time_range.elapsed_us(), 3)])
        elif e.name.startswith("aten::") and getattr(e, "cpu_parent", None) is None:
            aten += 1
    return {"kernels": kernels, "top_level_aten_ops": aten,
            "kernel_sum_us": round(sum(k[1] for k in kernels), 2)}


def kernel_events(fn: Callable, name_len: int = 80) -> list:
    """``[name, start_us, dur_us]`` of the GPU kernels of one call of ``fn``, in start order."""
    ks = [[e.name[:name_len], e.time_range.start, e.time_range.elapsed_us()]
          for e in profiled_events(fn) if is_kernel(e)]
    ks.sort(key=lambda k: k[1])
    return ks


def profile_timeline(fn: Callable, max_events: int = 20000) -> dict:
    """One profiled call of ``fn`` as two timelines (start and duration in us from the first
    event): GPU ``kernels`` and host ``cpu`` events (name, start, duration, depth 0 = top
    level), so host issue and GPU work can be laid side by side."""
    evs = profiled_events(fn)
    t0 = min(e.time_range.start for e in evs) if evs else 0
    kernels, cpu = [], []
    for e in evs:
        row = [e.name[:120], round(e.time_range.start - t0, 3),
               round(e.time_range.elapsed_us(), 3)]
        if "CUDA" in str(getattr(e, "device_type", "")):
            kernels.append(row)
        elif len(cpu) < max_events:
            depth, parent = 0, getattr(e, "cpu_parent", None)
            while parent is not None and depth < 8:
                depth, parent = depth + 1, getattr(parent, "cpu_parent", None)
            cpu.append(row + [depth])
    kernels.sort(key=lambda r: r[1])
    cpu.sort(key=lambda r: r[1])
    return {"kernels": kernels, "cpu": cpu}


def trace_events(prof) -> list:
    """The Chrome-trace events of a finished profiler (exported to a temporary file)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path, "rb") as fh:
            raw = fh.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw).get("traceEvents", [])


def kernel_args(fn: Callable, keys: Iterable[str], name_len: int | None = None) -> list:
    """The CUDA kernels one call of ``fn`` launches (after a warm call): name, ``dur_us`` and
    the trace arguments named in ``keys`` (grid, block, registers, shared memory...)."""
    keys = set(keys)
    prof, _ = profile_call(fn, cpu=False)
    out = []
    for x in trace_events(prof):
        if x.get("cat") != "kernel":
            continue
        name = x.get("name") if name_len is None else (x.get("name") or "")[:name_len]
        out.append({"name": name, "dur_us": x.get("dur"),
                    **{k: v for k, v in x.get("args", {}).items() if k in keys}})
    return out


# ----------------------------------------------------------------------------- sections
def run_sections(sections: Iterable[tuple[str, Callable]], result: dict, save: Callable,
                 *, budget_s: float = float("inf"), keep: bool = True) -> None:
    """Run ``(name, fn)`` sections in order: ``fn()``'s value into ``result["sections"]``
    (``keep=False``: the section stores its own results), a traceback into
    ``result["errors"]``, its seconds into ``result["seconds"]`` where the file has that
    object; a section starting past ``budget_s`` seconds since the harness started is
    skipped (recorded in ``errors``). ``save()`` after each."""
    for name, fn in sections:
        t0 = time.time()
        if t0 - STARTED > budget_s:
            result["errors"][name] = "skipped: time budget spent"
            continue
        try:
            value = fn()
            if keep:
                result["sections"][name] = value
        except Exception:  # noqa: BLE001 - record it and go on
            result["errors"][name] = traceback.format_exc()[-3000:]
            say(result["errors"][name])
        seconds = round(time.time() - t0, 2)
        if "seconds" in result:
            result["seconds"][name] = seconds
        save()
        empty_cache()
        say(f"== {name} {seconds:.1f} s", "ERROR" if name in result["errors"] else "ok",
            f"[{time.time() - STARTED:.0f} s]")


# ----------------------------------------------------------------------------- JSON
def _version(package: str) -> str | None:
    from importlib import metadata as md

    try:
        return md.version(package)
    except md.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def metadata() -> dict:
    """What ran, where: the script, its arguments and ``MEASURE_*``/``KINETO_*``/``NCCL_*``/
    ``CUBLAS_*`` settings, the start time (UTC), the machine (GPU name, count, SMs, memory,
    CPU, OS) and the software (Python, PyTorch, CUDA, cuDNN, NCCL, Triton, torchvision,
    transformers). Asked once per process."""
    global _META
    if _META is not None:
        return _META
    machine: dict = {"cpu": _cpu_model(), "cpu_count": os.cpu_count(),
                     "os": platform.platform()}
    software: dict = {"python": platform.python_version(), "torch": torch.__version__,
                      "cuda": torch.version.cuda,
                      **{p: _version(p) for p in ("triton", "torchvision", "transformers")}}
    if has_cuda():
        p = torch.cuda.get_device_properties(0)
        machine.update(gpu=p.name, gpu_count=torch.cuda.device_count(),
                       sm_count=p.multi_processor_count, gpu_memory_bytes=p.total_memory)
        software["cudnn"] = torch.backends.cudnn.version()
        try:
            software["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
        except Exception:  # noqa: BLE001 - a build without NCCL
            software["nccl"] = None
    prefixes = ("MEASURE_", "KINETO_", "NCCL_", "CUBLAS_")
    _META = {"script": os.path.basename(sys.argv[0]), "argv": sys.argv[1:],
             "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith(prefixes)},
             "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(STARTED)),
             "machine": machine, "software": software}
    return _META


def write_json(path: str, doc, indent: int | None = 1, meta: bool = True) -> str:
    """Write ``doc`` as JSON to ``path`` (a bare name goes in :data:`OUT`), a dict with its
    ``meta`` object (:func:`metadata`; ``meta=False``: a worker's scratch file), through a
    temporary file renamed into place. Returns the path."""
    if os.path.dirname(path) == "":
        path = out_path(path)
    if meta and isinstance(doc, dict):
        doc["meta"] = metadata()
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(doc, fh, indent=indent)
    os.replace(tmp, path)
    return path


if __name__ == "__main__":
    cli(__doc__)
