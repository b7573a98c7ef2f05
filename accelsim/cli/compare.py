"""``accelsim compare KERNELS.yaml --hw a100,h100,tpu_v4,npu,cpu [--json]``: one kernel suite
on several platforms, each through its own model; an aligned table of time, achieved FLOP/s,
utilisation, energy and the bound.

A platform named by an alias shows as ``alias=config`` (``npu=npu_ascend910``); a kernel run
at another precision than its own shows ``requested->run`` (``bf16->fp16`` on a V100)."""

from __future__ import annotations

import argparse

from accelsim.api.compare import (
    DEFAULT_ENERGY_TABLE,
    DEFAULT_HW,
    DEFAULT_KERNELS,
    PLATFORM_ALIASES,
    PRECISION_FALLBACK,
)
from accelsim.safe_text import show

TABLE = [("kernel", "kernel", "{}"), ("hw", "hw", "{}"), ("precision", "prec", "{}"),
         ("time_s", "time_us", "{:.4g}"), ("tflops", "TFLOP/s", "{:.4g}"),
         ("util", "util", "{:.1%}"), ("bw_util", "bw_util", "{:.1%}"),
         ("energy_j", "energy_mJ", "{:.4g}"), ("gflops_per_j", "GFLOP/J", "{:.4g}"),
         ("bound", "bound", "{}")]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``compare`` subcommand."""
    p = sub.add_parser("compare", help="run one kernel suite on several platforms",
                       description="Run every kernel of KERNELS on every platform of --hw through "
                                   "the platform's own model; print time, TFLOP/s, utilisation, "
                                   "energy and the bound.")
    p.add_argument("kernels", nargs="?", default=DEFAULT_KERNELS,
                   help=f"kernel suite YAML (default {DEFAULT_KERNELS})")
    aliases = ", ".join(f"{a}={c}" for a, c in PLATFORM_ALIASES.items())
    fallback = ", ".join(f"{a}->{b}" for a, b in PRECISION_FALLBACK.items())
    p.add_argument("--hw", default=",".join(DEFAULT_HW),
                   help=f"comma-separated hardware names, paths or aliases ({aliases}); a GPU "
                        f"or CPU without a kernel's precision falls back ({fallback}) "
                        "(default: %(default)s)")
    p.add_argument("--energy-table", default=DEFAULT_ENERGY_TABLE,
                   help="pJ table for every platform, or 'machine' for each one's own "
                        "(default %(default)s)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=run)


def format_table(df) -> str:
    """The comparison rows as an aligned text table (time in us, energy in mJ)."""
    rows = [[h for _, h, _ in TABLE]]
    for r in df.itertuples(index=False):
        d = r._asdict()
        d["time_s"] = d["time_s"] * 1e6
        d["energy_j"] = d["energy_j"] * 1e3
        if d["alias"]:
            d["hw"] = f"{d['alias']}={d['hw']}"
        if d.get("validation") == "unvalidated":
            d["hw"] += "*"
        if d["requested_precision"] != d["precision"]:
            d["precision"] = f"{d['requested_precision']}->{d['precision']}"
        rows.append([show(f.format(d[c]) + ("!" if c == "gflops_per_j" and d.get("energy_flag")
                                            else "")) for c, _, f in TABLE])
    widths = [max(len(row[i]) for row in rows) for i in range(len(TABLE))]
    lines = []
    for j, row in enumerate(rows):
        lines.append("  ".join(v.ljust(w) if i < 3 or i == len(row) - 1 else v.rjust(w)
                               for i, (v, w) in enumerate(zip(row, widths))))
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Execute ``accelsim compare``."""
    from accelsim.api.compare import compare
    from accelsim.report.export import dumps

    c = compare(args.kernels, args.hw, energy_table=args.energy_table)
    if args.json:
        print(dumps(c.to_dict()))
        return 0
    priced = ("each machine's own table" if c.energy_table == "machine"
              else f"table {show(c.energy_table)} for every machine")
    print(f"{show(c.kernels.name)}: {len(c.kernels.ops)} kernels x {len(c.hw)} platforms "
          f"(energy priced with {priced}, leakage included)")
    print(format_table(c.table))
    for r in c.table.itertuples(index=False):
        if r.energy_flag:
            print(f"! {show(r.kernel)} on {show(r.hw)}: {show(r.energy_flag)}")
    for hw in dict.fromkeys(c.table.loc[c.table["validation"] == "unvalidated", "hw"]):
        print(f"* {show(hw)}: unvalidated (datasheet values only, no measurement compared)")
    return 0
