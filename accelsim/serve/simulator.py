"""The serving engine as a discrete-event simulation (SimPy): arrivals, a router over
data-parallel replicas, and per replica an iteration-level scheduler with continuous batching,
chunked prefill, a paged KV cache and preemption.

Per iteration (as vLLM's V1 scheduler does, first come first served):

1. the running sequences, oldest first, each take their next tokens -- one for a decoding
   sequence, the next prompt chunk (at most the token budget left) for one still in prefill;
   each needs the KV blocks its new tokens fill. When the pool is short, the newest running
   sequence is preempted (``recompute``: its blocks are freed and it re-enters the queue's head
   to prefill its prompt and the tokens it generated; ``swap``: its blocks are copied to host
   memory and back when it resumes, over the GPU's host link);
2. waiting requests are admitted in arrival order while the iteration has sequences
   (``max_num_seqs``), tokens (``max_num_batched_tokens``) and free blocks for their first chunk
   (``admission: greedy``) or for every token they will hold (``reserve``: nothing is evicted
   later); without chunked prefill a prompt must fit the budget whole;
3. the iteration runs for the step model's time (:class:`accelsim.serve.step_model.StepModel`);
   a sequence whose prompt completed samples its first token (time to first token), a decoding
   sequence one more; one that has all its output tokens leaves and frees its blocks.

With prefill/decode disaggregation, new requests go to prefill replicas; a sequence whose
first token is out has its KV cache copied over the system's links to a decode replica
(the one with the fewest requests), which admits it like a request whose prompt is done.

A pipeline-parallel replica keeps ``pp`` iterations in flight (one per stage, as vLLM's
virtual engines do): each iteration holds a stage while it runs there, so the stages overlap
across iterations; each in-flight iteration has ``max_num_seqs / pp`` sequences at most.

Units: seconds, tokens, blocks.

Imports: serve.engine, serve.requests, serve.step_model, workload.parallel, hw.link, errors.
"""

from __future__ import annotations

from array import array
from collections import deque
from dataclasses import dataclass, field

import simpy

from accelsim.errors import UnsupportedError
from accelsim.hw import link as hw_link
from accelsim.serve.engine import EngineConfig
from accelsim.serve.requests import Request
from accelsim.serve.step_model import StepModel
from accelsim.workload.parallel import PrefillChunk, StepBatch


@dataclass(eq=False)
class Sequence:
    """A request inside the engine."""

    req: Request
    computed: int = 0
    """Tokens whose KV is in the GPU cache."""
    generated: int = 0
    prompt_len: int = 0
    """Tokens to prefill before the next token is sampled (the prompt, plus the generated
    tokens after a recompute preemption)."""
    blocks: int = 0
    swapped: int = 0
    """Tokens of KV held in host memory (swap preemption)."""
    first_token_s: float | None = None
    last_token_s: float | None = None
    finish_s: float | None = None
    preemptions: int = 0
    in_flight: bool = False
    running: bool = False

    @property
    def prefilling(self) -> bool:
        """Still processing its prompt."""
        return self.computed < self.prompt_len


@dataclass
class Replica:
    """One data-parallel copy of the model: its queue, running sequences and KV pool."""

    index: int
    model: StepModel
    total_blocks: int
    free_blocks: int = 0
    waiting: deque = field(default_factory=deque)
    running: list = field(default_factory=list)
    wake: simpy.Event | None = None
    stages: list = field(default_factory=list)
    outstanding: int = 0
    role: str = "both"
    """``both`` (prefill and decode), or with prefill/decode disaggregation ``prefill`` (its
    sequences leave after their first token, their KV cache copied to a decode replica) or
    ``decode`` (it admits only prefilled sequences)."""


@dataclass
class Iteration:
    """One iteration's record (the timeline)."""

    replica: int
    start_s: float
    end_s: float
    decode: int
    prefill_tokens: int
    sequences: int
    kv_blocks_used: int
    preempted: int
    energy_j: float


class ServingSimulation:
    """Requests through ``replicas`` copies of a step model (see the module doc)."""

    def __init__(self, models: list[StepModel], engine: EngineConfig,
                 requests: list[Request], roles: list[str] | None = None) -> None:
        if not requests:
            raise UnsupportedError("no requests to serve")
        self.engine = engine
        self.env = simpy.Environment()
        self.requests = requests
        self.replicas: list[Replica] = []
        bt = engine.kv_block_tokens
        for i, m in enumerate(models):
            blocks = m.kv_blocks()
            self.replicas.append(Replica(i, m, blocks, blocks,
                                         stages=[simpy.Resource(self.env, 1)
                                                 for _ in range(m.pp)],
                                         role=(roles or ["both"] * len(models))[i]))
        need = max(-(-(r.input_tokens + r.output_tokens) // bt) for r in requests)
        have = min(r.total_blocks for r in self.replicas)
        if need > have:
            longest = max(requests, key=lambda r: r.input_tokens + r.output_tokens)
            raise UnsupportedError(
                f"the KV cache holds {have * bt} tokens per replica ({have} blocks of {bt}); "
                f"request {longest.id} needs {longest.input_tokens + longest.output_tokens}")
        self.sequences: list[Sequence] = []
        self.iterations: list[Iteration] = []
        self.itl = array("d")
        self.preemptions = 0
        self.done = 0
        self._rr = 0
        m0 = models[0]
        route = hw_link.find_route(m0.system, m0.system.host.name, m0.gpus[0])
        self.host_link_bytes_per_s = hw_link.payload_bytes_per_s(route.bottleneck)

    # --- processes -----------------------------------------------------------------------
    def _route(self, role: str = "prefill") -> Replica:
        """The replica a new (``prefill``) or a prefilled (``decode``) sequence goes to."""
        pool = [r for r in self.replicas if r.role in (role, "both")]
        if self.engine.router == "round_robin":
            r = pool[self._rr % len(pool)]
            self._rr += 1
            return r
        return min(pool, key=lambda r: (r.outstanding, r.index))

    def _arrivals(self):
        for req in self.requests:
            if req.arrival_s > self.env.now:
                yield self.env.timeout(req.arrival_s - self.env.now)
            seq = Sequence(req, prompt_len=req.input_tokens)
            self.sequences.append(seq)
            rep = self._route()
            rep.waiting.append(seq)
            rep.outstanding += 1
            if rep.wake is not None and not rep.wake.triggered:
                rep.wake.succeed()

    def _blocks(self, tokens: int) -> int:
        return -(-tokens // self.engine.kv_block_tokens)

    def _preempt(self, rep: Replica, seq: Sequence) -> float:
        """Evict ``seq``; returns the seconds a swap-out adds to this iteration."""
        rep.running.remove(seq)
        seq.running = False
        rep.free_blocks += seq.blocks
        seq.blocks = 0
        seq.preemptions += 1
        self.preemptions += 1
        extra = 0.0
        if self.engine.preemption == "swap":
            seq.swapped = seq.computed
            extra = seq.computed * rep.model.kv_bytes_per_token / self.host_link_bytes_per_s
        else:
            seq.prompt_len = seq.req.input_tokens + seq.generated
        seq.computed = 0 if self.engine.preemption == "recompute" else seq.computed
        rep.waiting.appendleft(seq)
        return extra

    def _schedule(self, rep: Replica) -> tuple[list[tuple[Sequence, int]], float, int]:
        e = self.engine
        budget = e.max_num_batched_tokens
        max_seqs = max(1, e.max_num_seqs // rep.model.pp)
        chosen: list[tuple[Sequence, int]] = []
        extra, preempted = 0.0, 0
        for seq in list(rep.running):
            if budget <= 0 or len(chosen) >= max_seqs:
                break
            if seq.in_flight or not seq.running:
                continue
            n = min(seq.prompt_len - seq.computed, budget) if seq.prefilling else 1
            need = max(0, self._blocks(seq.computed + n) - seq.blocks)
            while need > rep.free_blocks:
                victim = next((s for s in reversed(rep.running) if not s.in_flight), None)
                if victim is None:
                    break
                extra += self._preempt(rep, victim)
                preempted += 1
                if victim is seq:
                    break
            if not seq.running or need > rep.free_blocks:
                break
            rep.free_blocks -= need
            seq.blocks += need
            chosen.append((seq, n))
            budget -= n
        while rep.waiting and budget > 0 and len(chosen) < max_seqs \
                and len(rep.running) < e.max_num_seqs:
            seq = rep.waiting[0]
            resume = seq.swapped
            left = seq.prompt_len - seq.computed if seq.prefilling else 1
            n = min(left, budget)
            if n < left and not e.chunked_prefill:
                break
            final = seq.computed + n
            if e.admission == "reserve":  # every token it will hold, booked now
                final = max(final, seq.req.input_tokens + seq.req.output_tokens)
            need = max(0, self._blocks(final) - seq.blocks)
            if need > rep.free_blocks:
                break
            rep.waiting.popleft()
            rep.free_blocks -= need
            seq.blocks += need
            if resume:
                extra += resume * rep.model.kv_bytes_per_token / self.host_link_bytes_per_s
                seq.swapped = 0
            rep.running.append(seq)
            seq.running = True
            chosen.append((seq, n))
            budget -= n
        return chosen, extra, preempted

    def _batch(self, chosen: list[tuple[Sequence, int]]) -> StepBatch:
        decode = ctx = 0
        chunks = []
        for seq, n in chosen:
            if seq.prefilling:
                chunks.append(PrefillChunk(n, seq.computed))
            else:
                decode += 1
                ctx += seq.computed + 1
        return StepBatch(decode=decode, decode_context=ctx, prefill=tuple(chunks))

    def _finish(self, rep: Replica, chosen: list[tuple[Sequence, int]], now: float) -> None:
        left = 0
        for seq, n in chosen:
            seq.in_flight = False
            was_prefill = seq.prefilling
            seq.computed += n
            if was_prefill and seq.prefilling:
                continue  # more prompt chunks to go
            seq.generated += 1
            if seq.first_token_s is None:
                seq.first_token_s = now
            elif seq.last_token_s is not None:
                self.itl.append(now - seq.last_token_s)
            seq.last_token_s = now
            if seq.generated >= seq.req.output_tokens:
                seq.finish_s = now
                seq.running = False
                left += 1
                rep.free_blocks += seq.blocks
                seq.blocks = 0
                rep.outstanding -= 1
                self.done += 1
            elif rep.role == "prefill":  # first token out: the KV cache moves to decode
                seq.running = False
                left += 1
                rep.outstanding -= 1
                self.env.process(self._hand_over(rep, seq))
        if left:
            rep.running = [s for s in rep.running if s.running]

    def _hand_over(self, rep: Replica, seq: Sequence):
        """Copy a prefilled sequence's KV cache to a decode replica, then queue it there (the
        prefill replica's blocks are freed when the copy ends)."""
        dst = self._route("decode")
        nbytes = seq.computed * rep.model.kv_bytes_per_token * rep.model.tp * rep.model.pp
        yield self.env.timeout(rep.model.kv_copy_s(dst.model, nbytes))
        rep.free_blocks += seq.blocks
        seq.blocks = 0
        dst.waiting.append(seq)
        dst.outstanding += 1
        for r in (rep, dst):
            if r.wake is not None and not r.wake.triggered:
                r.wake.succeed()

    def _iteration(self, rep: Replica, chosen, cost, extra: float, preempted: int):
        start = self.env.now
        stage_s = list(cost.stage_s)
        stage_s[0] += extra
        for s, res in enumerate(rep.stages):
            with res.request() as slot:
                yield slot
                yield self.env.timeout(stage_s[s])
        used = rep.total_blocks - rep.free_blocks
        batch = self._batch(chosen)
        self._finish(rep, chosen, self.env.now)
        self.iterations.append(Iteration(rep.index, start, self.env.now, batch.decode,
                                         batch.tokens - batch.decode, batch.sequences, used,
                                         preempted, cost.energy_j))

    def _engine(self, rep: Replica):
        """One virtual engine of a replica (``pp`` of them keep the pipeline full)."""
        while True:
            chosen, extra, preempted = self._schedule(rep)
            if not chosen:
                if self.done == len(self.requests):
                    return
                if rep.wake is None or rep.wake.triggered:  # one event for every idle engine
                    rep.wake = self.env.event()
                yield rep.wake
                continue
            for seq, _ in chosen:
                seq.in_flight = True
            cost = rep.model.step(self._batch(chosen))
            yield self.env.process(self._iteration(rep, chosen, cost, extra, preempted))
            for other in self.replicas:  # an engine idle for lack of blocks may go on now
                if other.wake is not None and not other.wake.triggered:
                    other.wake.succeed()

    def run(self) -> None:
        """Serve every request (Ctrl-C stops early; what finished is kept)."""
        self.env.process(self._arrivals())
        for rep in self.replicas:
            for _ in range(rep.model.pp):
                self.env.process(self._engine(rep))
        self.env.run()


__all__ = ["Iteration", "Replica", "Sequence", "ServingSimulation"]
