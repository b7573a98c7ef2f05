"""Capturing a user's PyTorch program and lowering what it calls (issue 23).

A program is captured on the ``meta`` device at the torch-function level, above the point
where PyTorch picks a device's kernels; the GPU lowering then decides per execution mode
what each call launches. These tests need torch (the ``torch`` extra, in ``dev``).
"""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from accelsim.api import capture, simulate  # noqa: E402
from accelsim.cli import main  # noqa: E402
from accelsim.errors import WorkloadError  # noqa: E402
from accelsim.workload.program import program_from_json, read_program  # noqa: E402
from accelsim.workload.program_ops import call_sites, unmodelled_calls  # noqa: E402


class Block(nn.Module):
    """A decoder block as a user writes it: F.rms_norm, a slice-assigned cache, SDPA."""

    def __init__(self, d: int = 256, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.w = nn.Parameter(torch.ones(d))
        self.q = nn.Linear(d, d, bias=False)
        self.o = nn.Linear(d, d, bias=False)

    def forward(self, x, cache, pos):
        b, s, d = x.shape
        h = F.rms_norm(x, (d,), self.w, 1e-5)
        q = self.q(h).view(b, s, self.heads, -1).transpose(1, 2)
        cache[:, :, pos:pos + s] = q
        a = F.scaled_dot_product_attention(q, cache[:, :, :pos + s], cache[:, :, :pos + s])
        return x + self.o(a.transpose(1, 2).reshape(b, s, d))


def _captured(batch: int = 2, context: int = 64):
    with torch.device("meta"):
        model = Block().to(torch.bfloat16)
        x = torch.zeros(batch, 1, 256, dtype=torch.bfloat16)
        cache = torch.zeros(batch, 4, context, 64, dtype=torch.bfloat16)
    return capture(model, x, cache, context - 1)


def test_calls_are_recorded_above_the_device_kernels():
    """On meta, rms_norm and SDPA decompose; the capture still sees one call of each."""
    fns = [c.fn for c in _captured().program.calls]
    assert fns.count("rms_norm") == 1
    assert fns.count("scaled_dot_product_attention") == 1
    assert "pow" not in fns and "bmm" not in fns  # not the CPU decomposition
    assert fns.count("module") == 3  # the block and its two linears
    assert "setitem" in fns


def test_views_launch_nothing_and_the_cache_write_is_a_strided_copy():
    sites = call_sites(_captured().program)
    views = [s for s in sites if s.fn in ("view", "transpose", "getitem")]
    assert views and all(s.op is None and s.key == "call.view" for s in views)
    (write,) = [s for s in sites if s.fn == "setitem"]
    assert write.family == "strided"
    assert write.read_bytes == write.write_bytes == 2 * 4 * 1 * 64 * 2  # the new q, bf16


def test_parameters_are_marked_and_linear_is_a_gemm_of_the_captured_shape():
    wl = _captured(batch=8)
    (q,) = [op for op in wl.ops if op.name == "q.linear"]
    assert (q.m, q.n, q.k) == (8, 256, 256)
    linear = next(c for c in wl.program.calls if c.fn == "linear")
    assert linear.inputs[1].param and not linear.inputs[0].param


def test_program_file_round_trips(tmp_path):
    wl = _captured()
    path = wl.program.write(tmp_path / "prog.json")
    back = read_program(path)
    assert back.calls == wl.program.calls
    assert path.read_bytes().startswith(b'{"format": "accelsim-program"')


@pytest.mark.parametrize("hw", ["h200", "tpu_v4", "spr_cpu"])
def test_a_captured_program_runs_on_every_machine_kind(hw):
    r = simulate(hw, _captured())
    assert len(r.layers) > 0


def test_eager_pays_each_calls_host_class_and_graph_replays_the_same_kernels():
    wl = _captured()
    eager = simulate("h200", wl, exec_mode="eager")
    graph = simulate("h200", wl, exec_mode="graph")
    assert eager.calls["kernels"].sum() == graph.calls["kernels"].sum()
    assert eager.step_s > graph.step_s
    classes = set(eager.calls["call_class"])
    assert {"module", "view", "f_linear", "rms_norm", "sdpa", "slice_copy"} <= classes


def test_an_unknown_call_is_listed_and_costed_by_the_fallback():
    def fn(x):
        return torch.special.i0(x)  # a call no lowering entry names

    with torch.device("meta"):
        x = torch.zeros(1024, 1024)
    wl = capture(fn, x)
    assert (unmodelled_calls(wl.program) == {"i0": 1}
            or list(unmodelled_calls(wl.program).values()) == [1])
    run = simulate("h200", wl, exec_mode="graph")
    assert run.calls["kernels"].sum() == 1


def test_data_dependent_control_flow_is_one_line_naming_the_call():
    def fn(x):
        return x * 2 if bool(x.sum() > 0) else x

    with torch.device("meta"):
        x = torch.zeros(4)
    with pytest.raises(WorkloadError) as err:
        capture(fn, x)
    text = str(err.value)
    assert "\n" not in text and "data-dependent" in text


def test_a_bad_program_file_names_the_field():
    doc = json.loads(_captured().program.to_text())
    doc["calls"][1]["in"][0]["dtype"] = "float99"
    with pytest.raises(WorkloadError, match=r"calls\[1\]\.in\[0\]\.dtype"):
        program_from_json(doc, file="p.json")


def test_cli_capture_then_run(tmp_path, capsys, monkeypatch):
    src = tmp_path / "mine.py"
    src.write_text(
        "import torch\nimport torch.nn.functional as F\n"
        "def build(device='meta', batch=2):\n"
        "    with torch.device(device):\n"
        "        w = torch.zeros(512, 512, dtype=torch.bfloat16)\n"
        "        x = torch.zeros(batch, 512, dtype=torch.bfloat16)\n"
        "    return (lambda x: F.gelu(x @ w)), (x,)\n")
    monkeypatch.chdir(tmp_path)
    assert main(["capture", f"{src}:build", "batch=4", "-o", "p.json"]) == 0
    assert "captured" in capsys.readouterr().out
    assert main(["run", "h200", "p.json", "--exec", "graph", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc  # a JSON document of the run
    assert main(["capture", f"{src}:build", "batsh=4", "-o", "q.json"]) == 2
    assert main(["capture", f"{src}:nothere", "-o", "q.json"]) == 2
    assert not (tmp_path / "q.json").exists()


@pytest.mark.parametrize("raise_, says", [
    ("raise ValueError('batch must be even')", "refused its arguments: batch must be even"),
    ("raise RuntimeError('no weights here')", "failed: RuntimeError: no weights here"),
])
def test_cli_capture_of_a_factory_that_raises_is_one_line(tmp_path, capsys, monkeypatch,
                                                          raise_, says):
    src = tmp_path / "bad.py"
    src.write_text(f"def build(device='meta', batch=2):\n    {raise_}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["capture", f"{src}:build", "batch=3", "-o", "q.json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0] and "bad.py:build" in err[0]
    assert not (tmp_path / "q.json").exists()


def test_cli_capture_of_a_program_that_raises_is_one_line_and_a_lone_input_is_one_argument(
        tmp_path, capsys, monkeypatch):
    """The factory runs, the user's program fails while captured: one line, exit 2, nothing
    written. A factory may return its one example input alone (not in a tuple): it is one
    argument, not unpacked along its first dimension."""
    src = tmp_path / "m.py"
    src.write_text(
        "import torch\n"
        "def bad(device='meta'):\n"
        "    def f(x):\n"
        "        raise KeyError('the cache is empty')\n"
        "    return f, (torch.zeros(2, 4, device=device),)\n"
        "def lone(device='meta'):\n"
        "    return (lambda x: x * 2), torch.zeros(3, 4, device=device)\n")
    monkeypatch.chdir(tmp_path)
    assert main(["capture", f"{src}:bad", "-o", "q.json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "failed while captured: KeyError" in err[0] and "m.py:bad" in err[0]
    assert not (tmp_path / "q.json").exists()
    assert main(["capture", f"{src}:lone", "-o", "l.json"]) == 0
    doc = json.loads((tmp_path / "l.json").read_text())
    assert doc["calls"][0]["in"][0]["shape"] == [3, 4]


def test_small_index_tensors_have_known_values_and_the_real_branch_is_captured():
    """Position arithmetic from Python numbers is evaluated beside the meta run, so code that
    branches on it (Hugging Face's packed-sequence check) captures the branch a real run takes;
    the recorded calls stay meta."""
    def fn(x):
        pos = torch.arange(x.shape[1], device=x.device)[None]
        packed = (torch.diff(pos, prepend=pos[:, :1] - 1, dim=-1) != 1).cumsum(-1)
        if (packed[:, -1] == 0).all():  # one sequence: the real run takes this branch
            x = x * 2
        return x + int(pos[0, -1].item())

    with torch.device("meta"):
        x = torch.zeros(2, 16, 8)
    fns = [c.fn for c in capture(fn, x).program.calls]
    assert fns.count("mul") == 1 and "cumsum" in fns and fns[-1] == "add"


def test_sdpa_output_takes_its_querys_layout_so_the_transpose_back_is_a_view():
    """cuDNN SDPA writes its output in the query's (batch, seq, heads, dim) layout: the
    prefill's ``transpose(1, 2).reshape`` launches no copy (run 1 profiles)."""
    def fn(x):
        q = x.view(2, 16, 4, 8).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, q, q, is_causal=True)
        return a.transpose(1, 2).reshape(2, 16, 32)

    with torch.device("meta"):
        x = torch.zeros(2, 16, 32, dtype=torch.bfloat16)
    sites = call_sites(capture(fn, x).program)
    assert [s.fn for s in sites if s.op is not None] == ["scaled_dot_product_attention"]


def test_an_index_copy_into_a_cache_moves_the_new_rows_not_the_cache():
    """``cache.index_copy_(2, pos, k)`` (Hugging Face's StaticCache) writes k's rows only."""
    def fn(cache, k):
        pos = torch.arange(1, device=k.device) + 511
        cache.index_copy_(2, pos, k)
        return cache

    with torch.device("meta"):
        cache = torch.zeros(64, 8, 512, 128, dtype=torch.bfloat16)
        k = torch.zeros(64, 8, 1, 128, dtype=torch.bfloat16)
    (site,) = [s for s in call_sites(capture(fn, cache, k).program) if s.fn == "index_copy_"]
    assert site.write_bytes == k.numel() * 2 and site.elements == k.numel()
    assert site.read_bytes == k.numel() * 2 + 8  # the source and the int64 index


def test_cli_capture_finds_the_built_in_example_programs_from_any_folder(tmp_path, capsys,
                                                                       monkeypatch):
    """``accelsim capture workloads/programs/plain.py:...`` (the README's line) works from a
    folder without ``workloads/``: the path resolves to the built-in copy, as other built-in
    paths do (``files.locate``)."""
    monkeypatch.chdir(tmp_path)
    assert main(["capture", "workloads/programs/plain.py:encoder", "batch=1", "seq=16",
                 "layers=1", "-o", "e.json"]) == 0
    assert "captured" in capsys.readouterr().out and (tmp_path / "e.json").is_file()
    assert main(["capture", "workloads/programs/nothere.py:encoder", "-o", "f.json"]) == 2


def test_cli_capture_without_pytorch_says_how_to_get_it(tmp_path, capsys, monkeypatch):
    """A factory file whose torch import fails (here a torch submodule that does not exist, as
    a missing torch would) is one line naming the extra to install; another missing module
    is named as such."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("import torch.no_such_part_xyz\ndef f(device='meta'): ...\n")
    (tmp_path / "b.py").write_text("import no_such_module_xyz\ndef f(device='meta'): ...\n")
    assert main(["capture", "a.py:f", "-o", "a.json"]) == 2
    assert "pip install 'accelsim[torch]'" in capsys.readouterr().err
    assert main(["capture", "b.py:f", "-o", "b.json"]) == 2
    assert "No module named 'no_such_module_xyz'" in capsys.readouterr().err


class TinyCnn(nn.Module):
    """A user's small CNN: a 3x3 conv, a depthwise 3x3, a pointwise 1x1, BatchNorm, ReLU."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(32, 64, 3, padding=1, bias=False)
        self.n1 = nn.BatchNorm2d(64)
        self.dw = nn.Conv2d(64, 64, 3, padding=1, groups=64, bias=False)
        self.pw = nn.Conv2d(64, 128, 1, bias=False)

    def forward(self, x):
        y = F.relu(self.n1(self.c1(x)))
        return F.relu(self.pw(self.dw(y)) + 1.0)


def _cnn_program(channels_last: bool, batch: int = 8):
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    with torch.device("meta"):
        model = TinyCnn().to(torch.bfloat16).eval().to(memory_format=fmt)
        x = torch.zeros(batch, 32, 28, 28, dtype=torch.bfloat16).to(memory_format=fmt)
    return capture(model, x)


@pytest.mark.parametrize("channels_last", [True, False])
def test_conv_results_keep_the_layout_cuda_gives_them(channels_last):
    """On meta a convolution returns a contiguous tensor whatever its input; on CUDA a
    channels-last input gives a channels-last result. Capture records the CUDA layout, so the
    ReLU and the next convolution see the strides they see on the GPU."""
    prog = _cnn_program(channels_last).program
    convs = [c for c in prog.calls if c.fn == "conv2d"]
    assert len(convs) == 3
    for c in convs:
        out = c.outputs[0]
        assert out.contiguous is (not channels_last)
        assert out.dense
    sites = [s for s in call_sites(prog) if s.fn == "relu"]
    assert sites and all(s.family == "vectorized" for s in sites)  # one layout, coalesced
    nchw = [s.meta.get("call") for s in call_sites(prog) if s.fn == "conv2d"]
    assert nchw == ([None] * 3 if channels_last else ["F.conv2d:nchw"] * 3)


def test_an_nchw_program_lowers_its_convolutions_as_the_single_op_call_does():
    """One lowering: each NCHW convolution of a captured program costs what ``accelsim op ...
    --call F.conv2d:nchw`` gives it, plus the stream's kernel tail where one shows (cuDNN's
    three transposes around a 3x3, PyTorch's NCHW kernel for the depthwise one, the faster
    way for the 1x1), and launches those kernels."""
    from accelsim.api.gpu import load_gpu, simulate_op
    from accelsim.api.model_run import run_model

    m = load_gpu("h200")
    prog = _cnn_program(False)
    ops = {s.name: s.op for s in call_sites(prog.program) if s.fn == "conv2d"}
    run = run_model(m, prog, exec_mode="graph")
    rows = run.calls.set_index("layer")
    for name, op in ops.items():
        one = simulate_op(m, op, mode="analytic", exec="graph", call="F.conv2d:nchw")
        # a whole program's stream adds the kernel tail to every kernel but the convolution
        # kernels' (hw/gpu README, "launch"): the 1x1's cuBLAS GEMM pays it there
        extra = rows.loc[name, "gpu_s"] - one["gpu_s"]
        gemm = one.get("nchw_pointwise") == "batched_gemm"
        assert extra == pytest.approx(m.host.kernel_tail_s if gemm else 0.0, abs=1e-12)
        copies = len(one["layout_copies"])
        assert copies == (3 if op.r == 3 and op.groups == 1 else
                          0 if op.groups > 1 else copies)
        assert rows.loc[name, "kernels"] >= 1 + copies
    cl = run_model(m, _cnn_program(True), exec_mode="graph")
    assert cl.calls.kernels.sum() < run.calls.kernels.sum()  # no transposes channels-last
    assert cl.step_s < run.step_s
    # eager: each layout copy is a launch of its own on the host
    eager = run_model(m, prog, exec_mode="eager").calls.set_index("layer")
    eager_cl = run_model(m, _cnn_program(True), exec_mode="eager").calls.set_index("layer")
    c1 = next(n for n, op in ops.items() if op.r == 3 and op.groups == 1)
    assert eager.loc[c1, "host_s"] == pytest.approx(
        eager_cl.loc[c1, "host_s"] + 3 * m.host.extra_kernel_s)


def test_an_nchw_program_runs_the_same_ops_on_other_machine_kinds():
    """The layout is the GPU lowering's business: a TPU or a CPU computes the same ops."""
    a, b = _cnn_program(False), _cnn_program(True)
    assert [op for op in a.ops] == [op for op in b.ops]
    for hw in ("tpu_v4", "spr_cpu"):
        assert simulate(hw, a).totals["time_s"] == pytest.approx(simulate(hw, b).totals["time_s"])
