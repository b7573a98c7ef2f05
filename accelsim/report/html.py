"""One self-contained HTML page per simulation: summary, plots (embedded PNG) and tables.

``write_html_report(result, path)`` writes a page for any machine kind (a systolic ``Result``
or a GPU/CPU ``ModelRun``) with

* what ran (``info``: the ``run`` object of ``accelsim run --json``, when given);
* a summary (machine, workload, dataflow or execution mode, totals, energy headline);
* per-op runs: time and energy per layer (bars coloured by op), time by op, where the GPU
  time goes (``result.breakdown``) and the host/stream timeline (``result.calls``);
* per-layer cycles (compute / stall / prologue+epilogue, stacked bars);
* per-layer utilisation (overall, compute, mapping efficiency);
* energy per layer by level (when ``result.energy`` holds an energy report);
* the roofline (when roofline tables are given: ``roofline=(roofs, points)`` from
  :func:`accelsim.devices.result_roofline`, or ``result.roofline``);
* a timeline of the layers (cycle offsets from the per-layer table; per-fold compute and DMA
  bars of the engine schedule when ``result.runs`` carries them);
* the per-layer table and the energy breakdown table;
* the ops without a cost model (``unmodelled``), when any.

Every plot is built from a table; nothing reads simulator state. The page has no external
resources (inline CSS, base64 PNG), so it can be mailed or archived as one file.

Imports: pandas, safe_text, files, report.figures, report.plots_energy, report.plots_roofline,
report.plots_run (matplotlib lazily). Text from files is HTML-escaped (``safe_text.html_text``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from accelsim.files import write_output
from accelsim.report.figures import new_axes, png_base64
from accelsim.report.plots_roofline import plot_roofline
from accelsim.report.plots_run import plot_layer_bars, plot_stream_timeline
from accelsim.safe_text import html_text, plot_text

_CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:0;color:#222;\
background:#f6f7f9}
header{background:#23395d;color:#fff;padding:18px 32px}
header h1{margin:0;font-size:22px} header p{margin:4px 0 0;opacity:.85;font-size:14px}
main{padding:16px 32px;max-width:1280px}
section{background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.08);\
padding:14px 20px;margin:14px 0}
h2{font-size:17px;margin:4px 0 10px;color:#23395d}
.cards{display:flex;flex-wrap:wrap;gap:12px}
.card{background:#eef2f8;border-radius:6px;padding:10px 14px;min-width:150px}
.card b{display:block;font-size:19px;color:#23395d} .card span{font-size:12px;color:#555}
table{border-collapse:collapse;font-size:12px;width:100%}
th{background:#23395d;color:#fff;position:sticky;top:0;text-align:right;padding:4px 8px}
td{padding:3px 8px;text-align:right;border-bottom:1px solid #e3e6ea;\
font-variant-numeric:tabular-nums;white-space:nowrap}
td:first-child,th:first-child{text-align:left}
tr:nth-child(even) td{background:#f8f9fb}
.scroll{max-height:520px;overflow:auto}
img{max-width:100%;height:auto}
.note{font-size:12px;color:#666}
"""


def _png(fig: Any) -> str:
    return png_base64(fig, dpi=110)


def _img(b64: str, alt: str) -> str:
    return f'<img alt="{html_text(alt)}" src="data:image/png;base64,{b64}">'


def _fmt(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return html_text(str(v))
    if isinstance(v, (int,)) or (isinstance(v, float) and math.isfinite(v) and v.is_integer()
                                  and abs(v) < 1e15):
        return f"{int(v):,}"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "inf" if v > 0 else ("nan" if math.isnan(v) else "-inf")
        return f"{v:.3e}" if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e7) else f"{v:.4g}"
    return html_text(str(v))


def _si(v: float, unit: str) -> str:
    for f, p in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, ""), (1e-3, "m"),
                 (1e-6, "u"), (1e-9, "n")):
        if abs(v) >= f:
            return f"{v / f:.3g} {p}{unit}"
    return f"{v:.3g} {unit}"


def _si_time(v: float) -> str:
    return _si(v, "s").replace("us", "\u00b5s")


def _card(value: str, label: str) -> str:
    return f'<div class="card"><b>{html_text(value)}</b><span>{html_text(label)}</span></div>'


def roofline_display(points: pd.DataFrame) -> pd.DataFrame:
    """The roofline table with readable units: GFLOP, MB and intensity per level, TFLOP/s."""
    out = pd.DataFrame({"layer": points["layer"], "op": points.get("op", "")})
    out["GFLOP"] = points["flops"] / 1e9
    for c in points.columns:
        if c.startswith("bytes_"):
            lv = c.removeprefix("bytes_")
            out[f"MB {lv}"] = points[c] / 1e6
            out[f"I {lv}"] = points.get(f"intensity_{lv}")
    out["bound"] = points["bound"]
    out["bound TFLOP/s"] = points["attainable_flops_per_s"] / 1e12
    if "achieved_flops_per_s" in points:
        out["simulated TFLOP/s"] = points["achieved_flops_per_s"] / 1e12
        out["% of bound"] = 100 * points["fraction_of_attainable"]
    return out


def table_html(df: pd.DataFrame, columns: list[str] | None = None, max_rows: int = 500) -> str:
    """An HTML table of ``df`` (numbers formatted, text escaped)."""
    cols = [c for c in (columns or list(df.columns)) if c in df.columns]
    head = "".join(f"<th>{html_text(str(c))}</th>" for c in cols)
    rows = []
    for rec in df[cols].head(max_rows).itertuples(index=False):
        cells = "".join(f"<td>{_fmt(v.item() if hasattr(v, 'item') else v)}</td>" for v in rec)
        rows.append(f"<tr>{cells}</tr>")
    more = (f'<p class="note">{len(df) - max_rows} more rows not shown</p>'
            if len(df) > max_rows else "")
    return f'<div class="scroll"><table><tr>{head}</tr>{"".join(rows)}</table></div>{more}'


MAX_LAYER_TICKS = 60
"""More layers than this get every k-th name on the x axis (the bars stay one per layer)."""


def _layer_ticks(ax: Any, layers: pd.DataFrame) -> None:
    """Layer names under the bars, at most ``MAX_LAYER_TICKS`` of them."""
    step = max(1, math.ceil(len(layers) / MAX_LAYER_TICKS))
    idx = list(range(0, len(layers), step))
    ax.set_xticks(idx, [plot_text(str(layers["layer"].iloc[i])[:22]) for i in idx], rotation=70,
                  fontsize=7, ha="right", rotation_mode="anchor")


def _bar_width(n: int) -> tuple[float, float]:
    return max(7.0, min(16.0, 0.3 * n + 3)), 3.8


def plot_cycles(layers: pd.DataFrame) -> Any:
    """Stacked bars of compute, stall and prologue+epilogue cycles per layer."""
    ax = new_axes(_bar_width(len(layers)), offscreen=True)
    fig = ax.figure
    x = range(len(layers))
    bottom = pd.Series(0.0, index=layers.index)
    parts = [("compute_cycles", "compute", "tab:blue"), ("stall_cycles", "stall", "tab:red")]
    if "prologue_cycles" in layers:
        edge = layers["prologue_cycles"] + layers.get("epilogue_cycles", 0)
        layers = layers.assign(_edge=edge)
        parts.append(("_edge", "prologue + epilogue", "tab:gray"))
    for col, label, color in parts:
        if col in layers:
            ax.bar(x, layers[col], bottom=bottom, label=label, color=color, width=0.8)
            bottom = bottom + layers[col].astype(float)
    _layer_ticks(ax, layers)
    ax.set_ylabel("cycles")
    ax.set_title("cycles per layer")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def plot_utilization(layers: pd.DataFrame) -> Any:
    """Per-layer utilisation: overall, compute (fill/drain included) and mapping efficiency."""
    ax = new_axes(_bar_width(len(layers)), offscreen=True)
    fig = ax.figure
    cols = [c for c in ("mapping_efficiency", "compute_util", "overall_util", "util")
            if c in layers]
    w = 0.8 / max(1, len(cols))
    for i, c in enumerate(cols):
        ax.bar([j + (i - (len(cols) - 1) / 2) * w for j in range(len(layers))], 100 * layers[c],
               width=w, label=c.replace("_", " "))
    _layer_ticks(ax, layers)
    ax.set_ylabel("%")
    ax.set_ylim(0, 105)
    ax.set_title("utilisation per layer")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def plot_timeline(layers: pd.DataFrame, runs: list | None = None, clock_hz: float | None = None,
                  max_folds: int = 4000) -> Any:
    """Gantt of the run: one bar per layer (cycle offsets), and, when the engine's fold
    schedules are given, per-fold compute and DMA (load/drain) bars below it."""
    from matplotlib import colormaps

    ax = new_axes((12, 3.2 if not runs else 4.2), offscreen=True)
    fig = ax.figure
    start = layers["total_cycles"].cumsum() - layers["total_cycles"]
    scale, unit = (1e6 / clock_hz, "time (µs)") if clock_hz else (1.0, "cycles")
    colors = colormaps["tab20"]
    for i, (s, d) in enumerate(zip(start, layers["total_cycles"], strict=True)):
        ax.broken_barh([(s * scale, d * scale)], (2.2, 0.8), color=colors(i % 20))
    rows = ["layers"]
    if runs:
        comp, dma, drawn = [], [], 0
        for off, run in zip(start, runs, strict=False):
            sch = getattr(run, "schedule", None)
            if sch is None or drawn > max_folds:
                continue
            for f in range(sch.folds):
                comp.append(((off + int(sch.compute_start[f])) * scale,
                             (int(sch.compute_end[f]) - int(sch.compute_start[f])) * scale))
                if sch.load_ready[f] > sch.load_start[f]:
                    dma.append(((off + int(sch.load_start[f])) * scale,
                                (int(sch.load_ready[f]) - int(sch.load_start[f])) * scale))
                if sch.drain_end[f] > sch.drain_start[f]:
                    dma.append(((off + int(sch.drain_start[f])) * scale,
                                (int(sch.drain_end[f]) - int(sch.drain_start[f])) * scale))
            drawn += sch.folds
        ax.broken_barh(comp, (1.1, 0.8), color="tab:blue")
        ax.broken_barh(dma, (0.0, 0.8), color="tab:orange")
        rows = ["DMA (load/drain)", "array folds", "layers"]
    ax.set_yticks([0.4, 1.5, 2.6][-len(rows):] if runs else [2.6], rows)
    ax.set_xlabel(unit)
    ax.set_title("timeline")
    return fig


def _energy_section(energy: Any) -> tuple[str, str | None]:
    if energy is None or not hasattr(energy, "breakdown"):
        return "", None
    from accelsim.report.plots_energy import plot_energy_by_layer

    bd = energy.breakdown(("layer", "level"))
    ax = plot_energy_by_layer(bd, stack="level", title="energy per layer, by level",
                              offscreen=True)
    png = _png(ax.figure)
    by_level = energy.breakdown(("level", "operand"))
    text = (f"<p>{html_text(energy.summary_line())}</p>" if hasattr(energy, "summary_line") else "")
    return text + table_html(by_level), png


def _cards(result: Any) -> list[str]:
    """The summary cards: totals and the energy headline, whatever the kind."""
    totals = dict(getattr(result, "totals", {}) or {})
    shown = {"total_cycles": ("total cycles", _fmt), "time_s": ("time", _si_time),
             "tflops_per_s": ("TFLOP/s achieved", lambda v: f"{v:.3g}"),
             "overall_util": ("overall utilisation", lambda v: f"{100 * v:.1f} %"),
             "dram_bytes": ("DRAM traffic", lambda v: _si(v, "B")), "layers": ("layers", _fmt),
             "energy_j": ("energy", lambda v: _si(v, "J")),
             "average_power_w": ("average power", lambda v: _si(v, "W")),
             "tokens_per_s": ("tokens/s", lambda v: f"{v:,.1f}")}
    cards = [_card(fmt(totals[k]), label) for k, (label, fmt) in shown.items() if k in totals]
    energy = getattr(result, "energy", None)
    s = dict(getattr(energy, "summary", None) or {})
    for key in ("total_pj", "pj_per_mac", "tops_per_w"):
        if key not in s and isinstance(getattr(energy, key, None), (int, float)):
            s[key] = getattr(energy, key)
    if "total_pj" in s and "energy_j" not in totals:
        cards.append(_card(_si(float(s["total_pj"]) * 1e-12, "J"), "energy"))
    if "pj_per_mac" in s and math.isfinite(float(s["pj_per_mac"])):
        cards.append(_card(f"{float(s['pj_per_mac']):.3g} pJ", "per MAC"))
    if "tops_per_w" in s and math.isfinite(float(s["tops_per_w"])):
        flag = str(getattr(result, "energy_flag", "") or "")  # report.power.energy_flag's line
        cards.append(_card(f"{float(s['tops_per_w']):.3g}" + (" !" if flag else ""),
                           "TOPS/W" + (f" ({flag})" if flag else "")))
    return cards


def _info_section(info: dict[str, Any] | None) -> str:
    """What ran, from the ``run`` object of ``accelsim run --json``."""
    if not info:
        return ""
    params = ", ".join(f"{k}={v}" + (" (default)" if k in info.get("defaults", ()) else "")
                       for k, v in (info.get("parameters") or {}).items())
    rows = [("workload", f"{info.get('workload', '')} ({info.get('workload_source', '')})"),
            ("parameters", params or "none"), ("machine", f"{info.get('machine', '')} "
                                                           f"({info.get('kind', '')})"),
            ("machine file", info.get("machine_file") or "-"), ("engine", info.get("engine", "")),
            ("energy table", info.get("energy_table") or "none"),
            ("--set", ", ".join(f"{k}={v}" for k, v in (info.get("overrides") or {}).items())
             or "none"), ("accelsim", info.get("accelsim_version", ""))]
    table = table_html(pd.DataFrame(rows, columns=["", "value"]))
    return f"<section><h2>What ran</h2>{table}</section>"


def _per_op_sections(result: Any) -> list[str]:
    """Sections of a per-op (GPU/CPU) run: time and energy per layer, time by op, where the
    GPU time goes, the host/stream timeline."""
    layers = result.layers
    out = []
    if "time_s" not in layers or "op" not in layers:
        return out
    fig = plot_layer_bars(layers, "time_s", 1e6, "µs", "time per layer")
    out.append(f"<section><h2>Time per layer</h2>{_img(_png(fig), 'time per layer')}</section>")
    by_op = layers.groupby("op", sort=False).agg(
        layers=("layer", "count"), time_s=("time_s", "sum"),
        **({"energy_j": ("energy_j", "sum")} if "energy_j" in layers else {}),
        **({"dram_bytes": ("dram_bytes", "sum")} if "dram_bytes" in layers else {}))
    total = float(by_op["time_s"].sum())
    by_op["share"] = by_op["time_s"] / total if total > 0 else math.nan
    by_op = by_op.sort_values("time_s", ascending=False).reset_index()
    out.append(f"<section><h2>Time by op</h2>{table_html(by_op)}</section>")
    breakdown = getattr(result, "breakdown", None)
    if breakdown is not None and not breakdown.empty:
        out.append('<section><h2>Where the time goes</h2><p class="note">GPU time per kernel '
                   "class; host-idle: the GPU waiting for the host.</p>"
                   f"{table_html(breakdown)}</section>")
    calls = getattr(result, "calls", None)
    fig = plot_stream_timeline(layers, calls)
    table = ("" if calls is None or calls.empty else
             f'<p class="note">the per-call timeline it is drawn from:</p>{table_html(calls)}')
    out.append(f"<section><h2>Timeline</h2>{_img(_png(fig), 'timeline')}{table}</section>")
    if "energy_j" in layers:
        fig = plot_layer_bars(layers, "energy_j", 1e3, "mJ", "energy per layer")
        energy = getattr(result, "energy", None)
        table = (table_html(energy.breakdown(("op",))) if hasattr(energy, "breakdown")
                 else "")
        out.append(f"<section><h2>Energy</h2>{_img(_png(fig), 'energy per layer')}"
                   f"{table}</section>")
    return out


def write_html_report(result: Any, path: str | Path, *,
                      roofline: tuple[pd.DataFrame, pd.DataFrame] | None = None,
                      title: str | None = None, info: dict[str, Any] | None = None,
                      unmodelled: list[dict[str, Any]] | None = None) -> Path:
    """Write the report of ``result`` (a systolic ``Result`` or a GPU/CPU ``ModelRun``) to
    ``path``; returns it.

    ``roofline``: ``(roofs, points)`` tables (see the module docstring); defaults to
    ``result.roofline`` when the result carries it. ``info``: what ran (the ``run`` object of
    ``accelsim run --json``). ``unmodelled``: rows ``{op, count, nodes}`` of ops without a
    cost model.
    """
    layers = result.layers
    machine = result.machine
    name = getattr(machine, "name", "machine")
    wl = getattr(getattr(result, "workload", None), "name", "workload")
    title = title or f"{wl} on {name}"
    energy = getattr(result, "energy", None)
    how = ((f"dataflow {result.dataflow}", f"mode {getattr(result, 'mode', '-')}")
           if hasattr(result, "dataflow") else
           (f"{getattr(machine, 'kind', '')}", (info or {}).get("engine")
            or f"exec {getattr(result, 'exec_mode', '-')}"))
    sub = " · ".join(html_text(str(x)) for x in (*how, getattr(machine, "description", "")) if x)
    parts = [f"<header><h1>{html_text(title)}</h1><p>{sub}</p></header><main>",
             f'<section><h2>Summary</h2><div class="cards">{"".join(_cards(result))}</div>'
             '</section>',
             _info_section(info)]
    figs = []
    if "compute_cycles" in layers and "total_cycles" in layers:
        figs.append(("Cycles per layer", _png(plot_cycles(layers))))
    if any(c in layers for c in ("overall_util", "compute_util", "mapping_efficiency", "util")):
        figs.append(("Utilisation per layer", _png(plot_utilization(layers))))
    parts += [f"<section><h2>{t}</h2>{_img(b, t)}</section>" for t, b in figs]
    if "total_cycles" not in layers:
        parts += _per_op_sections(result)
    rl = roofline if roofline is not None else getattr(result, "roofline", None)
    if rl is not None:
        roofs, points = rl
        ax = plot_roofline(roofs, points, title=f"roofline: {title}", offscreen=True)
        parts.append(f"<section><h2>Roofline</h2>{_img(_png(ax.figure), 'roofline')}"
                     '<p class="note">I = arithmetic intensity (FLOP per byte moved at that '
                     "level); bound = the roof that limits the layer (compute or a memory "
                     "level).</p>" + table_html(roofline_display(points)) + "</section>")
    if "total_cycles" in layers:
        fig = plot_timeline(layers, getattr(result, "runs", None),
                            getattr(machine, "clock_hz", None))
        parts.append(f"<section><h2>Timeline</h2>{_img(_png(fig), 'timeline')}</section>")
    etext, epng = _energy_section(energy) if "total_cycles" in layers else ("", None)
    if epng:
        parts.append(f"<section><h2>Energy</h2>{_img(epng, 'energy')}{etext}</section>")
    first = [c for c in ("layer", "op", "m", "n", "k", "dataflow", "folds", "total_cycles",
                         "compute_cycles", "stall_cycles", "time_s", "overall_util",
                         "compute_util", "mapping_efficiency", "dram_bytes", "energy_pj",
                         "pj_per_mac") if c in layers]
    rest = [c for c in layers.columns if c not in first]
    parts.append(f"<section><h2>Per-layer table</h2>{table_html(layers, first + rest)}</section>")
    if unmodelled:
        parts.append('<section><h2>Unmodelled ops</h2><p class="note">No cost model: each is '
                     "costed as a memory-bound copy of its tensors.</p>"
                     f"{table_html(pd.DataFrame(unmodelled))}</section>")
    parts.append('<p class="note">accelsim report; every figure is drawn from the tables on '
                 "this page.</p></main>")
    doc = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html_text(title)}</title>"
           f"<style>{_CSS}</style></head><body>{''.join(parts)}</body></html>")
    return write_output(path, doc)
