"""The validators of scripts/ can fail: each data set's figures are pinned to what they are
today (plus :data:`MARGIN_POINTS`), and each script's exit status says whether its stated
targets are met. The validators run in-process (their functions and ``main``); those over
about 2 s (Eyeriss, whole models) are ``slow`` (``pytest -m slow tests/scripts``)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
VALIDATORS = SCRIPTS / "validate"
DATA = SCRIPTS / "data"

MARGIN_POINTS = 1.0
"""How far a pinned figure may rise before the test fails, percentage points. The model is
deterministic; the margin is for model changes too small to call a regression."""


def _module(name: str):
    for d in (SCRIPTS, VALIDATORS):
        if str(d) not in sys.path:
            sys.path.insert(0, str(d))
    spec = importlib.util.spec_from_file_location(name, VALIDATORS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _within(got: dict, recorded: dict) -> list[str]:
    """Figures of ``got`` above their ``recorded`` value plus the margin, or missing."""
    return [f"{k}: {got.get(k)} > {v} + {MARGIN_POINTS}" for k, v in recorded.items()
            if k not in got or got[k] > v + MARGIN_POINTS]


def test_the_probe_points_left_out_are_exactly_those_the_held_out_file_measures_too():
    """validate_gpu.PROBE_ALSO_IN_HELDOUT (a constant, so the fits never read the dev file)
    is the overlap of the probe set with h200_heldout.json."""
    vg = _module("validate_gpu")
    held = [c[2] for c in vg.heldout_cases(json.loads((DATA / "h200_heldout.json").read_text()))]
    probe = vg._probe_cases(json.loads((DATA / "h200_kernel_probe2.json").read_text()))
    assert sorted((c[0], c[1]) for c in probe if c[2] in held) == sorted(vg.PROBE_ALSO_IN_HELDOUT)


# -- validate_gpu.py: calibration squares and copy, and h200_heldout.json (dev) families --

GPU_CALIBRATION = {"gemm_bf16": 4.8, "gemm_fp16": 4.5, "gemm_tf32": 5.6, "gemm_fp32": 4.7,
                   "hbm_copy": 3.1, "launch": 1.5}
"""MAPE per calibration group, percent (event mode; reproduces the efficiency fit). ``launch``'s
eager tiny kernel is the op called from eager PyTorch (``exec="eager"``: run 2's
``elementwise`` host class, 7.3 us, against calibration.json's 7.57 us)."""
GPU_DEV = {"gemm_nonsquare": 5.9, "gemm_skinny": 8.6, "gemm_align": 9.6, "gemm_align_k": 4.6,
           "gemm_waves": 4.2, "gemm_batched": 8.4, "gemm_fp8_square": 6.5,
           "gemm_int8_square": 8.5, "conv2d": 6.9, "attention": 5.1, "attention_decode": 5.9,
           "add": 9.4, "relu": 9.5, "gelu": 3.9, "layernorm": 8.0, "softmax": 7.2}
"""MAPE per operator family of h200_heldout.json, percent (event mode)."""


def test_gpu_single_op_figures_and_exit_status(capsys, monkeypatch):
    vg = _module("validate_gpu")
    from accelsim.api.gpu import load_gpu

    m = load_gpu("h200")
    cal = vg.group_mapes(vg.evaluate(m, vg.calibration_cases(
        json.loads((DATA / "h200_calibration.json").read_text())), "event"))
    dev = vg.group_mapes(vg.evaluate(m, vg.heldout_cases(
        json.loads((DATA / "h200_heldout.json").read_text())), "event"))
    assert _within(cal, GPU_CALIBRATION) == [] and _within(dev, GPU_DEV) == []
    missed = vg.missed_targets(cal, dev)
    assert vg.main([]) == (1 if missed else 0)
    monkeypatch.setattr(vg, "FAMILY_TARGET_PCT", 5.0)  # a stricter target: int8 and others miss
    assert vg.missed_targets(cal, dev) and vg.main([]) == 1
    assert "MISSED" in capsys.readouterr().out


# -- validate_gpu_conv.py: the dev split per family --

CONV_DEV = {"tiny_c_padded": 3.8, "gemm_1x1": 9.6, "implicit_gemm": 8.4, "depthwise": 4.9,
            "grouped": 0.8, "batchnorm": 1.7, "relu": 5.5, "add": 7.3, "maxpool": 7.0,
            "avgpool": 6.1}
"""MAPE per conv / glue family of the dev split (batch-32 run-1 cases, h200_heldout.json
convs), percent."""


def test_conv_family_figures_and_exit_status(capsys, monkeypatch):
    vc = _module("validate_gpu_conv")
    from accelsim.api.gpu import load_gpu

    mapes = vc.report(vc.evaluate(load_gpu("h200"), vc.cases()))
    dev = {g: v for (split, g), v in mapes.items() if split == "dev"}
    assert _within(dev, CONV_DEV) == []
    assert vc.main([]) == (1 if vc.missed_targets(mapes) else 0)
    monkeypatch.setattr(vc, "FAMILY_TARGET_PCT", 5.0)
    assert vc.main([]) == 1 and "MISSED" in capsys.readouterr().out


# -- validate_links.py: calibration copy curves, held-out collectives --

LINK_CURVES = {"h2d_pinned": (1.8, 12.7), "d2h_pinned": (1.3, 7.7), "h2d_pageable": (8.6, 17.2),
               "p2p": (5.9, 0.9)}
"""Max |error| per calibration copy curve at >= 1 MiB and below, percent."""
COLLECTIVES = (12.0, 20.2)
"""MAPE of the four held-out collectives at >= 1 MiB and below, percent (target 10 / 25)."""


def test_link_figures_and_exit_status(capsys):
    vl = _module("validate_links")
    for name, rows in vl.calibration_tables().items():
        (_, big), (_, small) = vl._mape(rows)
        rec = LINK_CURVES[name]
        assert 100 * big <= rec[0] + MARGIN_POINTS and 100 * small <= rec[1] + MARGIN_POINTS
    held = vl.heldout_tables()
    coll = [r for op in ("allreduce", "allgather", "reducescatter", "alltoall") for r in held[op]]
    (big, _), (small, _) = vl._mape(coll)
    assert 100 * big <= COLLECTIVES[0] + MARGIN_POINTS
    assert 100 * small <= COLLECTIVES[1] + MARGIN_POINTS
    missed = big > vl.COLLECTIVE_TARGETS[0] or small > vl.COLLECTIVE_TARGETS[1]
    assert missed  # today: 12.0 % against 10 % at >= 1 MiB (LINKS.md, README)
    assert vl.main([]) == 1 and "MISSED" in capsys.readouterr().out


# -- validate_eyeriss.py: JSSC 2017 Table V per layer --

EYERISS_MAX = {"total_latency_ms": 13.8, "processing_latency_ms": 13.9,
               "dram_access_per_mac": 12.7, "power_mw": 10.8}
"""Max |error| over AlexNet CONV1-5 per quantity, percent. The full-height PE-set rule
(``network.full_height_sets``) moved CONV2 from 12 to 14 % latency and -8 to -11 % power
(the maximum is CONV2 for all three); it was kept for VGG-16 (dev)."""


@pytest.mark.slow
def test_eyeriss_figures_and_exit_status(capsys, monkeypatch):
    ve = _module("validate_eyeriss")
    from accelsim.api.eyeriss import load_measurements, validation_table

    v = validation_table(load_measurements())
    layers = v[v["layer"] != "total"]
    got = {k: 100 * float(layers[f"{k}_err"].abs().max()) for k in EYERISS_MAX}
    assert _within(got, EYERISS_MAX) == []
    assert ve.main([]) == (1 if ve.check_targets(v) else 0)
    monkeypatch.setattr(ve, "TARGETS", {**ve.TARGETS, "total_latency_ms": 0.05})
    assert ve.main([]) == 1 and "MISSED" in capsys.readouterr().out


# -- validate_e2e.py: whole models, per data set --

E2E = {
    "h200_e2e_run2.json": {("calibration-run2", "eager"): 10.9, ("calibration-run2", "graph"): 2.9,
                           ("dev-run2", "eager"): 9.5, ("dev-run2", "graph"): 4.7},
    "h200_e2e_run3.json": {("calibration-run3", "compiled"): 4.6, ("dev-run3", "eager"): 12.1,
                           ("dev-run3", "graph"): 4.6, ("dev-run3", "compiled"): 11.1},
    "h200_e2e_run4.json": {("dev-run4", "eager"): 5.6, ("dev-run4", "graph"): 4.2,
                           ("dev-run3-shapes-run4", "eager"): 5.5,
                           ("dev-run3-shapes-run4", "graph"): 4.6},
    "h200_e2e_run4c.json": {("dev-run4c-calshapes", "compiled"): 29.2,
                            ("dev-run4c", "compiled"): 22.9},
    "h200_e2e_run7.json": {("dev-run7", "eager"): 3.0, ("dev-run7", "graph"): 5.6},
    "h200_e2e_run7c.json": {("dev-run7c-calshapes", "compiled"): 10.0,
                            ("dev-run7c", "compiled"): 19.5},
}
"""MAPE per (group, execution mode) of each whole-model set, percent."""
_TABLES: dict = {}


def _e2e_table(e2e, name: str):
    if name not in _TABLES:
        _TABLES[name] = e2e.validate((name,))
    return _TABLES[name]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(E2E))
def test_whole_model_figures_per_set(name):
    e2e = _module("validate_e2e")
    m = e2e.mape(_e2e_table(e2e, name))
    got = {(r.group, r.exec): r.mape_pct for r in m.itertuples(index=False)}
    assert set(got) == set(E2E[name])
    assert _within(got, E2E[name]) == []


@pytest.mark.slow
def test_whole_model_exit_status_reflects_the_targets(capsys, monkeypatch):
    """Today eager dev-run3 and every compiled dev group miss their targets: exit 1, and the
    misses are named; with targets everything meets, exit 0."""
    e2e = _module("validate_e2e")
    import pandas as pd

    df = pd.concat([_e2e_table(e2e, name) for name, _ in e2e.DATASETS], ignore_index=True)
    monkeypatch.setattr(e2e, "validate", lambda *a, **k: df)
    missed = e2e.missed_targets(e2e.mape(df))
    assert any(line.startswith("dev-run3 eager") for line in missed)
    assert not any(line.startswith("calibration") for line in missed)
    assert e2e.main([]) == 1 and "MISSED" in capsys.readouterr().out
    monkeypatch.setattr(e2e, "TARGETS_PCT", {"graph": 50.0, "eager": 50.0, "compiled": 50.0})
    assert e2e.main([]) == 0


# -- validate_external.py: the public sets of other chips (issue 24 point 7) -----------------

EXTERNAL_TPU = {"calibration": 9.5, "held_out": 9.8}
"""MAPE of the TPU v4 chip GEMMs per split, percent (tpu_v4_chip's call costs fitted on the
calibration split only)."""


def test_external_split_is_by_hash_alone_and_v100_rows_are_never_read():
    ve = _module("validate_external")
    assert ve.split_of("s", "a") == ve.split_of("s", "a")
    parts = [ve.split_of("neusight_h100", f"case{i}") for i in range(3000)]
    assert 0.30 < parts.count("calibration") / len(parts) < 0.37
    assert ve.is_held_back({"id": "x", "device": "Tesla V100-PCIE-32GB"})
    assert ve.is_held_back({"id": "x", "accelsim_hw": "v100"})
    assert not ve.is_held_back({"id": "x", "device": "NVIDIA A100 80GB PCIe"})
    for name in ve.SETS:
        doc = json.loads((DATA / "external" / f"{name}.json").read_text())
        for part, sec in doc["sections"].items():
            assert all(ve.split_of(name, c["id"]) == part for c in sec["cases"]), name
            assert not any(ve.is_held_back(c) for c in sec["cases"]), name


def test_external_tpu_chip_figures_and_exit_status(capsys, monkeypatch):
    ve = _module("validate_external")
    scored: list[list[dict]] = []  # the rows main scores, kept: the set is scored once
    score_rows = ve.score_rows

    def keep(*args, **kwargs):
        scored.append(score_rows(*args, **kwargs))
        return scored[-1]

    monkeypatch.setattr(ve, "score_rows", keep)
    assert ve.main(["--sets", "scalesim_tpuv4_gemm"]) == 0
    assert "all held-out targets met" in capsys.readouterr().out
    (rows,) = scored
    cases = ve.load_set("scalesim_tpuv4_gemm")
    assert len(rows) == len(cases["calibration"]) + len(cases["held_out"])
    summary = ve.summarise(rows)
    got = {split: 100 * v["mape"] for (_, _, split), v in summary.items()}
    assert not _within(got, EXTERNAL_TPU), _within(got, EXTERNAL_TPU)
    worse = [{**r, "err": 3 * r["err"]} for r in rows]  # a model 3x as wrong misses 15 %
    assert ve.missed(ve.summarise(worse))


# -- validate_hf_capture.py: a captured Hugging Face Llama against run 1's profiles --------

HF_CAPTURE = {"gemm": 3.8, "gemm_worst": 24.5, "attention": 0.0, "attention_worst": 0.0,
              "reduce": 0.0, "reduce_worst": 0.0, "cat": 0.0, "cat_worst": 0.0, "index": 0.0,
              "index_worst": 0.0, "copy": 0.6, "copy_worst": 0.8, "elementwise": 0.5,
              "elementwise_worst": 0.5}
"""Kernel count per kind of the captured ``LlamaForCausalLM`` against the 20 Llama-3-8B profiles
of h200_e2e.json: MAPE and worst case, percent (bookkeeping kernels apart). GEMM misses the
2 % target at decode batch 64 (289 modelled / 322 profiled) and 256 (321 / 258): the split-K
choices of the library model."""


@pytest.mark.slow
def test_hf_capture_figures_and_exit_status(capsys, monkeypatch):
    pytest.importorskip("transformers")
    vh = _module("validate_hf_capture")
    rows = vh.evaluate()
    assert len(rows) == 20
    got = {}
    for kind, errs in vh.kind_errors_pct(rows).items():
        got[kind] = sum(map(abs, errs)) / len(errs)
        got[f"{kind}_worst"] = max(map(abs, errs))
    assert set(got) == set(HF_CAPTURE) and _within(got, HF_CAPTURE) == []
    monkeypatch.setattr(vh, "evaluate", lambda limit=None: rows)
    table = vh.fidelity_rows()
    kinds = [r for r in table if r["target_pct"] is not None]
    assert [r["cases"] for r in table] == [20] * len(table) and len(kinds) == len(vh.KINDS)
    assert all(r["role"] == "calibration" and r["data_set"] == "h200_e2e.json" for r in table)
    missed = [r["family"] for r in kinds if not r["met"]]
    assert set(missed) <= {"HF Llama-3-8B captured: gemm kernels"}  # every other kind meets it
    assert vh.main([]) == (1 if missed else 0)
    assert ("MISSED" in capsys.readouterr().out) == bool(missed)
    monkeypatch.setattr(vh, "TARGET_PCT", 30.0)  # a looser target: every kind meets it
    assert vh.main([]) == 0 and all(r["met"] for r in vh.fidelity_rows() if r["target_pct"])


# -- the other validators' per-family figures (issue 26 point 2), from their fidelity rows ---

PINNED_ROWS = {
    "validate_traces": {
        ('h200_programs_run12.json', 'captured program step (eager)'): 9.4,
        ('h200_programs_run12.json', 'captured program step (graph)'): 4.9,
        ('h200_programs_run12.json', 'Kineto trace replay (eager, host modelled)'): 16.2,
        ('h200_programs_run17.json', 'captured program step (eager)'): 15.8,
        ('h200_programs_run17.json', 'captured program step (graph)'): 5.5,
        ('h200_programs_run18.json', 'captured program step (eager)'): 20.9,
        ('h200_programs_run18.json', 'captured program step (graph)'): 6.9,
        ('h200_programs_run20.json', 'captured program step (eager)'): 10.0,
        ('h200_programs_run20.json', 'captured program step (graph)'): 7.6,
        ('h200_programs_run22.json', 'captured program step (eager)'): 47.5,
        ('h200_programs_run22.json', 'captured program step (graph)'): 7.3,
        ('h200_torch_transformer_run24.json[eager_steps]', 'captured program step (eager)'): 37.2,
        ('h200_torch_transformer_run24.json', 'captured program step (graph)'): 5.6,
        ('h200_torch_transformer_run26.json', 'captured program step (eager)'): 4.2,
        ('h200_torch_transformer_run26.json', 'captured program step (graph)'): 5.9,
        ('h200_programs_run29.json', 'captured program step (eager)'): 23.5,
        ('h200_programs_run29.json', 'captured program step (graph)'): 3.3,
    },
    "validate_single_ops": {
        ('h200_single_ops_run11.json', 'linear (eager)'): 39.5,
        ('h200_single_ops_run11.json', 'linear (graph)'): 14.5,
        ('h200_single_ops_run11.json', 'matmul (eager)'): 8.9,
        ('h200_single_ops_run11.json', 'matmul (graph)'): 6.1,
        ('h200_single_ops_run11.json', 'conv2d channels_last (eager)'): 48.8,
        ('h200_single_ops_run11.json', 'conv2d channels_last (graph)'): 18.4,
        ('h200_single_ops_run11.json', 'conv2d nchw (eager)'): 41.2,
        ('h200_single_ops_run11.json', 'conv2d nchw (graph)'): 8.6,
        ('h200_single_ops_run11.json', 'layernorm (eager)'): 39.2,
        ('h200_single_ops_run11.json', 'layernorm (graph)'): 6.1,
        ('h200_single_ops_run11.json', 'rmsnorm (eager)'): 37.1,
        ('h200_single_ops_run11.json', 'rmsnorm (graph)'): 9.8,
        ('h200_single_ops_run11.json', 'softmax (eager)'): 31.3,
        ('h200_single_ops_run11.json', 'softmax (graph)'): 8.2,
        ('h200_single_ops_run11.json', 'gelu (eager)'): 32.2,
        ('h200_single_ops_run11.json', 'gelu (graph)'): 6.0,
        ('h200_single_ops_run11.json', 'add (eager)'): 37.5,
        ('h200_single_ops_run11.json', 'add (graph)'): 8.0,
        ('h200_single_ops_run11.json', 'attention (eager)'): 32.7,
        ('h200_single_ops_run11.json', 'attention (graph)'): 6.0,
        ('h200_single_ops_run12.json', 'linear (eager)'): 6.7,
        ('h200_single_ops_run12.json', 'linear (graph)'): 11.0,
        ('h200_single_ops_run12.json', 'matmul (eager)'): 1.3,
        ('h200_single_ops_run12.json', 'matmul (graph)'): 7.8,
        ('h200_single_ops_run12.json', 'conv2d channels_last (eager)'): 24.9,
        ('h200_single_ops_run12.json', 'conv2d channels_last (graph)'): 19.6,
        ('h200_single_ops_run12.json', 'conv2d nchw (eager)'): 14.7,
        ('h200_single_ops_run12.json', 'conv2d nchw (graph)'): 11.4,
        ('h200_single_ops_run12.json', 'layernorm (eager)'): 20.6,
        ('h200_single_ops_run12.json', 'layernorm (graph)'): 6.1,
        ('h200_single_ops_run12.json', 'rmsnorm (eager)'): 15.4,
        ('h200_single_ops_run12.json', 'rmsnorm (graph)'): 7.2,
        ('h200_single_ops_run12.json', 'softmax (eager)'): 12.9,
        ('h200_single_ops_run12.json', 'softmax (graph)'): 11.1,
        ('h200_single_ops_run12.json', 'gelu (eager)'): 13.7,
        ('h200_single_ops_run12.json', 'gelu (graph)'): 5.5,
        ('h200_single_ops_run12.json', 'add (eager)'): 23.7,
        ('h200_single_ops_run12.json', 'add (graph)'): 8.9,
        ('h200_single_ops_run12.json', 'attention (eager)'): 18.1,
        ('h200_single_ops_run12.json', 'attention (graph)'): 14.2,
        ('h200_single_ops_run15.json', 'linear (eager)'): 16.0,
        ('h200_single_ops_run15.json', 'linear (graph)'): 12.2,
        ('h200_single_ops_run15.json', 'matmul (eager)'): 21.3,
        ('h200_single_ops_run15.json', 'matmul (graph)'): 8.4,
        ('h200_single_ops_run15.json', 'conv2d channels_last (eager)'): 11.0,
        ('h200_single_ops_run15.json', 'conv2d channels_last (graph)'): 14.3,
        ('h200_single_ops_run15.json', 'conv2d nchw (eager)'): 7.3,
        ('h200_single_ops_run15.json', 'conv2d nchw (graph)'): 10.6,
        ('h200_single_ops_run15.json', 'layernorm (eager)'): 3.0,
        ('h200_single_ops_run15.json', 'layernorm (graph)'): 5.2,
        ('h200_single_ops_run15.json', 'rmsnorm (eager)'): 6.6,
        ('h200_single_ops_run15.json', 'rmsnorm (graph)'): 11.2,
        ('h200_single_ops_run15.json', 'softmax (eager)'): 14.3,
        ('h200_single_ops_run15.json', 'softmax (graph)'): 13.6,
        ('h200_single_ops_run15.json', 'gelu (eager)'): 3.0,
        ('h200_single_ops_run15.json', 'gelu (graph)'): 8.8,
        ('h200_single_ops_run15.json', 'add (eager)'): 3.4,
        ('h200_single_ops_run15.json', 'add (graph)'): 4.9,
        ('h200_single_ops_run15.json', 'attention (eager)'): 8.7,
        ('h200_single_ops_run15.json', 'attention (graph)'): 8.1,
        ('h200_single_ops_run16.json', 'linear (eager)'): 33.7,
        ('h200_single_ops_run16.json', 'linear (graph)'): 15.6,
        ('h200_single_ops_run16.json', 'matmul (eager)'): 31.6,
        ('h200_single_ops_run16.json', 'matmul (graph)'): 9.0,
        ('h200_single_ops_run16.json', 'conv2d channels_last (eager)'): 17.5,
        ('h200_single_ops_run16.json', 'conv2d channels_last (graph)'): 22.4,
        ('h200_single_ops_run16.json', 'conv2d nchw (eager)'): 22.8,
        ('h200_single_ops_run16.json', 'conv2d nchw (graph)'): 18.0,
        ('h200_single_ops_run16.json', 'layernorm (eager)'): 4.1,
        ('h200_single_ops_run16.json', 'layernorm (graph)'): 7.4,
        ('h200_single_ops_run16.json', 'rmsnorm (eager)'): 7.1,
        ('h200_single_ops_run16.json', 'rmsnorm (graph)'): 10.1,
        ('h200_single_ops_run16.json', 'softmax (eager)'): 13.5,
        ('h200_single_ops_run16.json', 'softmax (graph)'): 7.4,
        ('h200_single_ops_run16.json', 'gelu (eager)'): 9.5,
        ('h200_single_ops_run16.json', 'gelu (graph)'): 7.6,
        ('h200_single_ops_run16.json', 'add (eager)'): 20.1,
        ('h200_single_ops_run16.json', 'add (graph)'): 17.2,
        ('h200_single_ops_run16.json', 'attention (eager)'): 5.6,
        ('h200_single_ops_run16.json', 'attention (graph)'): 5.3,
        ('h200_single_ops_run17.json', 'linear (eager)'): 17.2,
        ('h200_single_ops_run17.json', 'linear (graph)'): 11.3,
        ('h200_single_ops_run17.json', 'matmul (eager)'): 14.6,
        ('h200_single_ops_run17.json', 'matmul (graph)'): 11.2,
        ('h200_single_ops_run17.json', 'conv2d channels_last (eager)'): 16.7,
        ('h200_single_ops_run17.json', 'conv2d channels_last (graph)'): 18.3,
        ('h200_single_ops_run17.json', 'conv2d nchw (eager)'): 9.1,
        ('h200_single_ops_run17.json', 'conv2d nchw (graph)'): 10.0,
        ('h200_single_ops_run17.json', 'layernorm (eager)'): 5.0,
        ('h200_single_ops_run17.json', 'layernorm (graph)'): 7.5,
        ('h200_single_ops_run17.json', 'rmsnorm (eager)'): 8.9,
        ('h200_single_ops_run17.json', 'rmsnorm (graph)'): 8.4,
        ('h200_single_ops_run17.json', 'softmax (eager)'): 13.5,
        ('h200_single_ops_run17.json', 'softmax (graph)'): 10.5,
        ('h200_single_ops_run17.json', 'gelu (eager)'): 5.3,
        ('h200_single_ops_run17.json', 'gelu (graph)'): 4.6,
        ('h200_single_ops_run17.json', 'add (eager)'): 5.5,
        ('h200_single_ops_run17.json', 'add (graph)'): 1.6,
        ('h200_single_ops_run17.json', 'attention (eager)'): 7.4,
        ('h200_single_ops_run17.json', 'attention (graph)'): 7.2,
        ('h200_single_ops_run18.json', 'linear (eager)'): 12.8,
        ('h200_single_ops_run18.json', 'linear (graph)'): 9.9,
        ('h200_single_ops_run18.json', 'matmul (eager)'): 9.6,
        ('h200_single_ops_run18.json', 'matmul (graph)'): 20.7,
        ('h200_single_ops_run18.json', 'conv2d channels_last (eager)'): 24.5,
        ('h200_single_ops_run18.json', 'conv2d channels_last (graph)'): 12.2,
        ('h200_single_ops_run18.json', 'conv2d nchw (eager)'): 11.2,
        ('h200_single_ops_run18.json', 'conv2d nchw (graph)'): 6.8,
        ('h200_single_ops_run18.json', 'layernorm (eager)'): 10.9,
        ('h200_single_ops_run18.json', 'layernorm (graph)'): 7.0,
        ('h200_single_ops_run18.json', 'rmsnorm (eager)'): 16.5,
        ('h200_single_ops_run18.json', 'rmsnorm (graph)'): 11.1,
        ('h200_single_ops_run18.json', 'softmax (eager)'): 16.5,
        ('h200_single_ops_run18.json', 'softmax (graph)'): 12.5,
        ('h200_single_ops_run18.json', 'gelu (eager)'): 6.6,
        ('h200_single_ops_run18.json', 'gelu (graph)'): 5.9,
        ('h200_single_ops_run18.json', 'add (eager)'): 18.3,
        ('h200_single_ops_run18.json', 'add (graph)'): 11.3,
        ('h200_single_ops_run18.json', 'attention (eager)'): 8.6,
        ('h200_single_ops_run18.json', 'attention (graph)'): 9.6,
        ('h200_single_ops_run20.json', 'linear (eager)'): 10.1,
        ('h200_single_ops_run20.json', 'linear (graph)'): 8.4,
        ('h200_single_ops_run20.json', 'matmul (eager)'): 6.1,
        ('h200_single_ops_run20.json', 'matmul (graph)'): 8.4,
        ('h200_single_ops_run20.json', 'conv2d channels_last (eager)'): 20.5,
        ('h200_single_ops_run20.json', 'conv2d channels_last (graph)'): 11.7,
        ('h200_single_ops_run20.json', 'conv2d nchw (eager)'): 14.4,
        ('h200_single_ops_run20.json', 'conv2d nchw (graph)'): 9.8,
        ('h200_single_ops_run20.json', 'layernorm (eager)'): 20.1,
        ('h200_single_ops_run20.json', 'layernorm (graph)'): 3.4,
        ('h200_single_ops_run20.json', 'rmsnorm (eager)'): 22.7,
        ('h200_single_ops_run20.json', 'rmsnorm (graph)'): 13.1,
        ('h200_single_ops_run20.json', 'softmax (eager)'): 16.5,
        ('h200_single_ops_run20.json', 'softmax (graph)'): 13.0,
        ('h200_single_ops_run20.json', 'gelu (eager)'): 10.4,
        ('h200_single_ops_run20.json', 'gelu (graph)'): 7.1,
        ('h200_single_ops_run20.json', 'add (eager)'): 22.0,
        ('h200_single_ops_run20.json', 'add (graph)'): 5.7,
        ('h200_single_ops_run20.json', 'attention (eager)'): 8.9,
        ('h200_single_ops_run20.json', 'attention (graph)'): 10.2,
    },
    "validate_programs": {
        ('h200_programs_run8.json[smallest_shapes]', 'smallest shapes eager'): 29.6,
        ('h200_programs_run8.json[smallest_shapes]', 'smallest shapes graph'): 6.6,
        ('h200_programs_run8.json', 'other shapes eager, steps ≥ 10 ms'): 12.1,
        ('h200_programs_run8.json', 'other shapes eager'): 21.1,
        ('h200_programs_run8.json', 'other shapes graph'): 7.8,
        ('h200_programs_run8.json', "other shapes' kernel count (graph)"): 1.7,
    },
    "validate_library_choices": {
        ('h200_library_run9.json[calibration]', 'linear: main kernel'): 10.2,
        ('h200_library_run9.json[calibration]', 'linear: all kernels'): 9.8,
        ('h200_library_run9.json[calibration]', 'decode_attention: main kernel'): 14.7,
        ('h200_library_run9.json[calibration]', 'decode_attention: all kernels'): 16.1,
        ('h200_library_run9.json', 'linear: main kernel'): 14.3,
        ('h200_library_run9.json', 'linear: all kernels'): 14.6,
        ('h200_library_run9.json', 'decode_attention: main kernel'): 17.4,
        ('h200_library_run9.json', 'decode_attention: all kernels'): 19.0,
    },
}
"""MAPE (percent) per (data set, family) of each validator's ``fidelity_rows`` (what its
``main`` prints and exits by), recorded 2026-12-04 at the model of that day. The whole-model,
GPU, convolution, link, Eyeriss, external and HF-capture sets are pinned above; the serving
set's rows (20 minutes at the fidelity table's request count) are held by the README equality
test of ``tests/scripts/test_fidelity.py``."""


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PINNED_ROWS))
def test_per_family_figures_of_each_validator(name):
    spec = importlib.util.spec_from_file_location("fidelity", SCRIPTS / "fidelity.py")
    fid = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fid)
    rows = fid.run_one(name)
    got = {(r["data_set"], r["family"]): r["mape_pct"] for r in rows}
    assert set(got) == set(PINNED_ROWS[name])
    assert _within(got, PINNED_ROWS[name]) == []


def test_run12_exit_status_follows_its_targets(capsys):
    """The captured-program steps of run 12 are held to 10 % (eager) and 5 % (graph): a verdict
    on made-up errors fails when either is missed, and passes when both are met."""
    vt = _module("validate_traces")
    assert vt.PROGRAM_TARGETS_PCT == {"eager": 10.0, "graph": 5.0}
    ok = {"eager": [9.0, -9.0], "graph": [4.0, -4.0], "trace": [50.0]}
    assert vt.program_verdict(ok) == 0
    assert vt.program_verdict({**ok, "graph": [6.0, -4.5]}) == 1
    assert vt.program_verdict({**ok, "eager": [12.0, 9.0]}) == 1
    assert vt.program_verdict({**ok, "eager": []}) == 1
    assert "MISSED" in capsys.readouterr().out


@pytest.mark.slow
def test_held_out_program_runs_exit_by_their_fidelity_rows(capsys):
    """``--run17`` / ``--run18`` (captured programs of new shapes, no traces) exit 1 exactly
    when a fidelity row of that file misses its target; its role is printed from the
    registry."""
    vt = _module("validate_traces")
    rows = vt.fidelity_rows()
    for flag, path in (("--run17", vt.RUN17), ("--run18", vt.RUN18)):
        mine = [r for r in rows if r["data_set"] == path.name]
        assert len(mine) == 2 and all(r["cases"] >= 9 for r in mine)  # eager and graph, no trace
        assert vt.main([flag]) == (1 if any(r["met"] is False for r in mine) else 0)
        assert f"{path.name} ({mine[0]['role']};" in capsys.readouterr().out


def test_single_op_rows_miss_a_target_exactly_when_main_exits_1(capsys):
    vs = _module("validate_single_ops")
    rows = [r for r in vs.fidelity_rows() if r["data_set"] == vs.RUN11]  # main's default set
    assert rows and any(r["met"] is False for r in rows) == (vs.main(["--quiet"]) == 1)
    capsys.readouterr()


def test_serving_cases_that_guided_a_choice_are_dev_and_the_rest_stay_held_out():
    """The serving split as the registry records it: the nine calibration rows, the rows read
    before a choice (dev: the 70B-on-one-H100 rows, then every case that runs since the
    sustained-clock change), and held out only what no choice saw (cases not run yet)."""
    vs = _module("validate_serving")
    cases = json.loads((DATA / "serving_published.json").read_text())["cases"]
    splits = {c["id"]: vs.split_of(c) for c in cases}
    assert sum(s == "calibration" for s in splits.values()) == 9
    assert all(s == "dev" for i, s in splits.items() if i.startswith(vs.DEV_SINCE_SUSTAINED)
               and not i.startswith(vs.CALIBRATION_PREFIX))
    assert all(s == "held-out" for i, s in splits.items() if i.startswith(("mlperf", "sglang")))
    row = {"id": "trtllm014_x", "split": "dev"}
    assert vs.pooled(row) and not vs.pooled({"id": vs.DEV_PREFIXES[0] + "x", "split": "dev"})
    assert not vs.pooled({"id": vs.CALIBRATION_PREFIX + "x", "split": "calibration"})
