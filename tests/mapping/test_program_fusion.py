"""torch.compile's fusion of a captured program (mapping/program_fusion.py, issue 23 point 2).

An approximation of Inductor: pointwise/reduction/copy chains along the recorded dataflow
become one kernel each, GEMMs/SDPA stay extern, views launch nothing. These tests capture
small programs on ``meta`` (torch, the ``dev`` extra) and check the groups, their bytes and
what ``--exec compiled`` launches.
"""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from accelsim.api import capture  # noqa: E402
from accelsim.api.model_run import run_model  # noqa: E402
from accelsim.config.lowering import load_lowering  # noqa: E402
from accelsim.errors import ConfigError  # noqa: E402
from accelsim.mapping.gpu_lowering import lower_sites  # noqa: E402
from accelsim.mapping.program_fusion import MAX_FUSION_SIZE, fuse_sites, fusion_groups  # noqa: E402
from accelsim.workload.program import program_from_json  # noqa: E402
from accelsim.workload.program_ops import GEMMS, call_sites, program_workload  # noqa: E402

D, FFN, ROWS = 256, 512, 8
BF16 = 2


class Chain(nn.Module):
    """Linear -> F.rms_norm -> residual add -> SiLU * up -> Linear."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(D, D, bias=False)
        self.w = nn.Parameter(torch.ones(D))
        self.gate = nn.Linear(D, FFN, bias=False)
        self.up = nn.Linear(D, FFN, bias=False)
        self.down = nn.Linear(FFN, D, bias=False)

    def forward(self, x):
        h = F.rms_norm(self.a(x), (D,), self.w, 1e-5) + x
        return self.down(F.silu(self.gate(h)) * self.up(h))


def _chain():
    with torch.device("meta"):
        model = Chain().to(torch.bfloat16)
        x = torch.zeros(1, ROWS, D, dtype=torch.bfloat16)
    return capture(model, x).program


def _groups(program):
    sites = call_sites(program)
    groups, kinds = fusion_groups(program, sites)
    return sites, groups, kinds


def test_chain_fuses_to_two_kernels_with_their_bytes():
    program = _chain()
    sites, groups, _ = _groups(program)
    fns = [sorted(sites[m].fn for m in g.members) for g in groups]
    assert fns == [["add", "rms_norm"], ["mul", "silu"]]
    norm, mlp = groups
    # a(x), the norm weight and x come in; h (read by gate and up) goes out
    assert norm.read_bytes == ROWS * D * BF16 + D * BF16 + ROWS * D * BF16
    assert norm.write_bytes == ROWS * D * BF16
    assert norm.kernel_class == "norm"
    # gate(h) and up(h) in, their product out: SiLU's output never reaches memory
    assert mlp.read_bytes == 2 * ROWS * FFN * BF16
    assert mlp.write_bytes == ROWS * FFN * BF16
    eager = run_model("h200", program_workload(program), exec_mode="eager")
    compiled = run_model("h200", program_workload(program), exec_mode="compiled")
    assert int(eager.calls["kernels"].sum()) == 8  # 4 GEMMs, rms_norm, add, silu, mul
    assert int(compiled.calls["kernels"].sum()) == 6  # 4 GEMMs, 2 fused
    fused = compiled.calls[compiled.calls["call_class"] == "compiled_kernel"]
    assert len(fused) == 6  # every launch, extern or fused, pays the compiled wrapper's cost
    assert (compiled.calls["call_class"] == "compiled_step").sum() == 1


def test_gemms_never_fuse_and_split_a_chain():
    """x * 2 -> Linear -> + 1: the GEMM between two pointwise calls stays its own kernel and
    the two pointwise calls are two kernels (fusing them would make a cycle)."""
    lin = nn.Linear(D, D, bias=False, device="meta", dtype=torch.bfloat16)

    def f(x):
        return lin(x * 2) + 1

    program = capture(f, torch.zeros(ROWS, D, dtype=torch.bfloat16, device="meta")).program
    sites, groups, kinds = _groups(program)
    assert len(groups) == 2
    for i, s in enumerate(sites):
        if s.fn in GEMMS:
            assert kinds[i] == "extern"
            assert all(i not in g.members for g in groups)


def test_views_never_launch():
    def f(x):
        y = x.view(ROWS, 2, D // 2).transpose(0, 1)
        return y.reshape(2, -1)[:, :4].unsqueeze(0)

    program = capture(f, torch.zeros(ROWS, D, device="meta")).program
    sites, groups, kinds = _groups(program)
    viewish = [i for i, s in enumerate(sites) if s.key == "call.view"]
    assert viewish and all(kinds[i] == "host" for i in viewish)
    assert all(i not in g.members for g in groups for i in viewish)
    calls = fuse_sites(program, sites, load_lowering("compiled"))
    assert all(c.op_index not in viewish for c in calls)


def test_hand_written_rmsnorm_is_one_reduction_kernel():
    """LlamaRMSNorm as Hugging Face writes it: cast, pow, mean, +eps, rsqrt, mul, cast, *w
    (eight eager kernels) -> one fused kernel reading x and w, writing the result."""
    w = torch.ones(D, device="meta", dtype=torch.bfloat16)

    def f(x):
        h = x.float()
        var = h.pow(2).mean(-1, keepdim=True)
        return w * (h * torch.rsqrt(var + 1e-6)).to(torch.bfloat16)

    x = torch.zeros(ROWS, D, device="meta", dtype=torch.bfloat16)
    program = capture(f, x).program
    _, groups, _ = _groups(program)
    assert len(groups) == 1
    g = groups[0]
    assert g.kernel_class == "norm"
    assert g.read_bytes == ROWS * D * BF16 + D * BF16  # x and the weight, each once
    assert g.write_bytes == ROWS * D * BF16


def test_residual_after_the_mlp_does_not_join_the_norm_feeding_it():
    """x2 = x + down(f(norm(x))): the add reads x from the norm's group, but that group feeds
    the down projection the add also reads: one group would be a cycle."""
    with torch.device("meta"):
        model = Chain().to(torch.bfloat16)

    def f(x):
        return x + model(x)

    program = capture(f, torch.zeros(1, ROWS, D, dtype=torch.bfloat16, device="meta")).program
    sites, groups, _ = _groups(program)
    last_add = max(i for i, s in enumerate(sites) if s.fn == "add")
    own = next(g for g in groups if last_add in g.members)
    assert own.members == [last_add]


def test_group_size_is_bounded():
    def f(x):
        for _ in range(2 * MAX_FUSION_SIZE):
            x = x + 1
        return x

    program = capture(f, torch.zeros(ROWS, D, device="meta")).program
    _, groups, _ = _groups(program)
    assert max(len(g.members) for g in groups) <= MAX_FUSION_SIZE
    assert len(groups) == 2


def test_program_without_tensor_ids_fuses_by_shape():
    """An older program file (no ``id``): inputs are matched to the latest equal output."""
    program = _chain()
    doc = json.loads(program.to_text())
    assert any("id" in t for c in doc["calls"] for t in c.get("in", []))
    for c in doc["calls"]:
        for t in c.get("in", []) + c.get("out", []):
            t.pop("id", None)
    old = program_from_json(doc)
    _, groups, _ = _groups(old)
    assert [len(g.members) for g in groups] == [2, 2]


class TinyLM(nn.Module):
    """A small decoder as users write one: HF-style RMSNorm, rotate-half RoPE, SDPA, SwiGLU."""

    def __init__(self, layers: int = 2, d: int = 256, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.embed = nn.Embedding(1000, d)
        self.qkv = nn.ModuleList(nn.Linear(d, 3 * d, bias=False) for _ in range(layers))
        self.o = nn.ModuleList(nn.Linear(d, d, bias=False) for _ in range(layers))
        self.gu = nn.ModuleList(nn.Linear(d, 4 * d, bias=False) for _ in range(layers))
        self.down = nn.ModuleList(nn.Linear(2 * d, d, bias=False) for _ in range(layers))
        self.w = nn.Parameter(torch.ones(d))

    def norm(self, x):
        h = x.float()
        return self.w * (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)).type_as(x)

    def rope(self, x, cos, sin):
        x1, x2 = x.chunk(2, dim=-1)
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    def forward(self, ids, cos, sin):
        x = self.embed(ids)
        b, s, d = x.shape
        for qkv, o, gu, down in zip(self.qkv, self.o, self.gu, self.down, strict=True):
            q, k, v = qkv(self.norm(x)).view(b, s, 3, self.heads, -1).transpose(1, 3).unbind(2)
            a = F.scaled_dot_product_attention(self.rope(q, cos, sin), self.rope(k, cos, sin),
                                               v, is_causal=True)
            x = x + o(a.transpose(1, 2).reshape(b, s, d))
            g, u = gu(self.norm(x)).chunk(2, dim=-1)
            x = x + down(F.silu(g) * u)
        return self.norm(x)


def test_small_model_compiled_launches_fewer_kernels_and_beats_eager_when_host_bound():
    with torch.device("meta"):
        model = TinyLM().to(torch.bfloat16)
        ids = torch.zeros(1, 16, dtype=torch.long)
        cos = torch.zeros(16, 64, dtype=torch.bfloat16)
        sin = torch.zeros(16, 64, dtype=torch.bfloat16)
    wl = capture(model, ids, cos, sin)
    eager = run_model("h200", wl, exec_mode="eager")
    compiled = run_model("h200", wl, exec_mode="compiled")
    ek, ck = int(eager.calls["kernels"].sum()), int(compiled.calls["kernels"].sum())
    assert ck < ek / 2
    busy = float(eager.breakdown.query("kernel_class != 'host-idle'")["time_s"].sum())
    assert busy < eager.step_s / 2  # host bound: the GPU idles most of the eager step
    assert compiled.step_s < eager.step_s


def test_compiled_table_fuses_and_refuses_an_unknown_rule(tmp_path):
    table = load_lowering("compiled")
    assert table.fuse == "inductor" and table.submit == "per_call"
    assert table.fuse_call == "compiled_kernel"
    assert load_lowering("eager").fuse is None
    bad = tmp_path / "bad.yaml"
    bad.write_text("mode: bad\ninherit: compiled\nfuse: xla\n")
    with pytest.raises(ConfigError, match="fuse"):
        load_lowering(str(bad))


def _scores_program(scale_q: bool):
    """Attention scores as a plain program writes them: per-head views of two projections,
    ``q @ k.transpose(-1, -2)`` at batch 2 (matmul folds both operands with a copy each);
    ``scale_q`` scales q first (a pointwise producer of the copied operand)."""
    b, s, h, d = 2, 16, 4, 32
    wq = torch.zeros(h * d, h * d, device="meta", dtype=torch.bfloat16)
    wk = torch.zeros(h * d, h * d, device="meta", dtype=torch.bfloat16)

    def f(x):
        q = (x @ wq).view(b, s, h, d).transpose(1, 2)
        k = (x @ wk).view(b, s, h, d).transpose(1, 2)
        if scale_q:
            q = q * 0.125
        return q @ k.transpose(-1, -2)

    return capture(f, torch.zeros(b, s, h * d, device="meta", dtype=torch.bfloat16)).program


@pytest.mark.parametrize("scale_q", [False, True])
def test_compiled_operand_copies_fuse_into_a_pointwise_producer_only(scale_q):
    """Eager launches both folding copies of the scores matmul beside the bmm. Compiled, a
    copy whose operand a fused pointwise group produces is that group writing the GEMM's
    layout (no kernel); one whose producer is a library GEMM stays a copy kernel, launched at
    the compiled kernel's host class."""
    program = _scores_program(scale_q)
    sites = call_sites(program)
    eager = [c for c in lower_sites(sites, load_lowering("eager")) if c.kernel_class == "copy"]
    assert len(eager) == 2 and all(c.extra_kernel for c in eager)
    table = load_lowering("compiled")
    copies = [c for c in fuse_sites(program, sites, table)
              if c.work is not None and c.work.name.endswith(".operand_copy")]
    assert len(copies) == (1 if scale_q else 2)
    assert all(c.call == table.fuse_call and not c.extra_kernel for c in copies)


def _manual_attention(keep_scores: bool):
    """``softmax(q @ k^T / sqrt(d)) @ v`` over per-head views, heads merged back after;
    ``keep_scores`` also reads the scores elsewhere (a second reader: no rewrite)."""
    b, s, h, d = 2, 16, 4, 32
    w = torch.zeros(h * d, h * d, device="meta", dtype=torch.bfloat16)

    def f(x):
        q = (x @ w).view(b, s, h, d).transpose(1, 2)
        k = (x @ w).view(b, s, h, d).transpose(1, 2)
        v = (x @ w).view(b, s, h, d).transpose(1, 2)
        scores = q @ k.transpose(-1, -2) / 8.0
        out = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, s, h * d)
        return out + scores.mean() if keep_scores else out

    return capture(f, torch.zeros(b, s, h * d, device="meta", dtype=torch.bfloat16)).program


def test_compiled_hand_written_attention_becomes_one_sdpa_call():
    """Inductor's attention pattern pass (mapping/attention_pattern.py): q @ k^T, a scalar
    scale, softmax and @ v become one SDPA call (the stack's attention kernel), no softmax
    kernel, no folding copies, and the heads merge back as a view of the kernel's output;
    eager launches all of them."""
    from accelsim.mapping.attention_pattern import replace_attention

    program = _manual_attention(keep_scores=False)
    sdpa = [c for c in replace_attention(program).calls
            if c.fn == "scaled_dot_product_attention"]
    assert len(sdpa) == 1 and sdpa[0].args["scale"] == pytest.approx(1 / 8.0)
    assert sdpa[0].inputs[1].shape == (2, 4, 16, 32)          # k, not k^T
    compiled = fuse_sites(program, call_sites(program), load_lowering("compiled"))
    classes = [c.kernel_class for c in compiled if c.work is not None]
    assert classes.count("attention") == 1 and "copy" not in classes
    assert classes.count("gemm") == 3                          # the three projections
    eager = [c for c in lower_sites(call_sites(program), load_lowering("eager"))
             if c.work is not None]
    assert sum(c.kernel_class == "gemm" for c in eager) == 5   # and the two batched GEMMs


def test_attention_scores_with_a_second_reader_stay_as_written():
    from accelsim.mapping.attention_pattern import replace_attention

    program = _manual_attention(keep_scores=True)
    assert replace_attention(program) is program


def test_attention_pattern_needs_tensor_ids():
    """A program file without tensor ids cannot show a single reader: nothing is replaced."""
    import dataclasses

    from accelsim.mapping.attention_pattern import replace_attention

    program = _manual_attention(keep_scores=False)
    bare = dataclasses.replace(program, calls=tuple(
        dataclasses.replace(c, inputs=tuple(dataclasses.replace(t, tensor_id=None)
                                            for t in c.inputs),
                            outputs=tuple(dataclasses.replace(t, tensor_id=None)
                                          for t in c.outputs))
        for c in program.calls))
    assert replace_attention(bare) is bare
