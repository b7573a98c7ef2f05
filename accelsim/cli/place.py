"""``accelsim place NODE MODEL [--policy greedy|pinned] [--pin 'layer*=gpu0'] [--json]``:
place a model's operators on a heterogeneous node, simulate it with link contention, and
report time per device, transfers, idle time and the makespan.

MODEL is a zoo spec (``resnet50:batch=8``), or a workload YAML/CSV path or built-in workload
name (``alexnet``, ``workloads/kernels/multikernelbench.yaml``), whose ops are placed as a
chain in file order (:func:`accelsim.api.placement.graph_from_workload`)."""

from __future__ import annotations

import argparse

from accelsim.safe_text import show


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``place`` subcommand."""
    p = sub.add_parser("place", help="place a model on a heterogeneous node and simulate it",
                       description="Assign each operator of MODEL to a device of NODE by predicted "
                                   "cost including transfers, run the placed graph with link "
                                   "contention, and report per device and per transfer.")
    p.add_argument("node", help="node config name or path (kind: node), e.g. node_gpu_npu")
    p.add_argument("model", help="zoo model spec (e.g. resnet50 or 'resnet50:batch=8'), or a "
                                 "workload YAML/CSV path or built-in workload name (e.g. "
                                 "alexnet), its ops placed as a chain in file order; a zoo "
                                 "name wins over a workload of the same name")
    p.add_argument("--policy", default="greedy", choices=["greedy", "pinned"],
                   help="greedy (earliest finish time) or pinned (--pin rules; the rest greedy)")
    p.add_argument("--pin", action="append", default=[], metavar="PATTERN=DEVICE",
                   help="pin ops whose name matches the glob to a device, e.g. 'layer4*=npu0'")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=run)


def _table(rows: list[list[str]]) -> str:
    rows = [[show(v) for v in r] for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for j, r in enumerate(rows):
        out.append("  ".join(v.ljust(w) if i <= 1 else v.rjust(w)
                             for i, (v, w) in enumerate(zip(r, widths))))
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    """Execute ``accelsim place``."""
    from accelsim.api.placement import place_model
    from accelsim.report.export import dumps

    policy = args.policy
    r = place_model(args.node, args.model, policy=policy, pins=args.pin)
    if args.json:
        print(dumps(r.to_dict()))
        return 0
    pins = f", pins {' '.join(args.pin)}" if args.pin else ""
    print(show(f"{r.graph.name} ({len(r.graph.nodes)} ops) on {r.node.name}, "
               f"policy {policy}{pins}"))
    rows = [["device", "hardware", "ops", "busy_ms", "idle_ms", "util"]]
    for d in r.devices.itertuples(index=False):
        hw = r.node.device(d.device).hardware
        rows.append([d.device, hw, str(d.ops), f"{d.busy_s * 1e3:.4g}", f"{d.idle_s * 1e3:.4g}",
                     f"{d.util:.1%}"])
    print(_table(rows))
    print()
    tr = r.transfers
    if len(tr):
        rows = [["transfer", "copies", "MB", "time_ms"]]
        for t in tr.itertuples(index=False):
            rows.append([f"{t.src}->{t.dst}", str(t.copies), f"{t.bytes / 1e6:.4g}",
                         f"{t.time_s * 1e3:.4g}"])
        print(_table(rows))
    else:
        print("no transfers")
    print()
    print(f"makespan: {r.makespan_s * 1e3:.4g} ms (placement estimate, uncontended: "
          f"{r.placement.estimate_s * 1e3:.4g} ms)")
    if r.single_device_s:
        best = min(r.single_device_s, key=r.single_device_s.get)
        alone = ", ".join(f"{d} {s * 1e3:.4g} ms" for d, s in r.single_device_s.items())
        print(show(f"single device: {alone}; placement vs best single ({best}): "
                   f"{r.single_device_s[best] / r.makespan_s:.3g}x"))
    return 0
