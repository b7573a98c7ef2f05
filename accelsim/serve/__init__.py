"""LLM serving on simulated GPUs: engines as data, request streams, a discrete-event serving
engine (continuous batching, chunked prefill, paged KV cache, preemption, data-parallel
replicas) whose iteration times come from the GPU model of one engine step.

Modules: ``engine`` (the engine configs of ``configs/engines/``), ``requests`` (arrivals:
fixed lengths, Poisson, trace files), ``step_model`` (one iteration's time and energy on a
tensor/pipeline-parallel group, cached by batch composition; the KV-cache capacity),
``simulator`` (the SimPy serving engine), ``metrics`` (TTFT, TPOT, ITL, throughput,
goodput, percentiles).

Imports: units, errors, limits, files, precision, config, devices, hw, report, workload. It
sits below ``api``.
"""
