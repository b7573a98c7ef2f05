"""accelsim vs ZigZag (zigzag-dse 3.9.1) on the same small accelerator: access counts and energy.

The accelerator (one description, written out for both tools):

* a 16 x 16 output-stationary array of int8 MACs (32-bit accumulators, 8-bit final outputs);
* per PE: an 8-bit input register, an 8-bit weight register, a 32-bit accumulator;
* a 1 MiB on-chip SRAM holding all three operands, 128-bit port;
* DRAM behind a 64-bit port;
* workload: one GEMM, M = N = K = 256.

Per-access costs are the same in both tools (ZigZag's tpu_like example values): MAC 0.04 pJ;
register 0.095 pJ per 8-bit access (0.38 pJ per 32-bit accumulator access); SRAM 416.16 /
378.4 pJ per 2048-bit read / write, i.e. 26.01 / 23.65 pJ per 128-bit access; DRAM 700 pJ per
64-bit access, read and write.

ZigZag runs in its own virtual environment (its dependencies clash with accelsim's), through
``zigzag.api`` in a subprocess; accelsim runs in-process. Usage::

    PYTHONPATH=. /work/venv/bin/python scripts/bench/compare_zigzag.py \
        --zigzag-python /work/zzvenv/bin/python [--json]

Prints, per level / operand / direction, the bits moved and the energy in both tools and the
relative difference; every difference above 5 % is explained in accelsim/report/ENERGY.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import yaml

ROWS = COLS = 16
M = N = K = 256
MAC_PJ = 0.04
REG_PJ_PER_BIT = 0.095 / 8
SRAM_BITS = 128
SRAM_READ_PJ = 416.16 * SRAM_BITS / 2048
SRAM_WRITE_PJ = 378.4 * SRAM_BITS / 2048
SRAM_BYTES = 2**20
DRAM_BITS = 64
DRAM_PJ = 700.0
CLOCK_HZ = 1e9

# ----------------------------------------------------------------------------- ZigZag side


def _port(name: str, kind: str, bits: int, alloc: list[str]) -> dict:
    return {"name": name, "type": kind, "bandwidth_min": bits, "bandwidth_max": bits,
            "allocation": alloc}


def zigzag_inputs(sram_bytes: int = SRAM_BYTES, search: bool = False) -> tuple[list, dict, list]:
    """(workload, accelerator, mapping) as ZigZag 3.9 YAML documents.

    ``search``: leave the temporal loop order to ZigZag's LOMA search (minimum energy)
    instead of fixing it to accelsim's fold order.
    """
    workload = [{"id": 0, "name": "gemm", "operator_type": "Gemm",
                 "equation": "O[b][k]+=I[b][c]*W[c][k]", "loop_dims": ["B", "C", "K"],
                 "loop_sizes": [M, K, N],
                 "operand_precision": {"W": 8, "I": 8, "O": 32, "O_final": 8}}]

    def reg(op: str, bits: int) -> dict:
        cost = REG_PJ_PER_BIT * bits
        ports = [_port("r_port_1", "read", bits, [f"{op}, tl"]),
                 _port("w_port_1", "write", bits, [f"{op}, fh"])]
        if op == "O":
            ports += [_port("r_port_2", "read", bits, ["O, th"]),
                      _port("w_port_2", "write", bits, ["O, fl"])]
        return {"size": bits, "r_cost": cost, "w_cost": cost, "area": 0, "latency": 1,
                "operands": [op], "ports": ports, "served_dimensions": []}

    all_ops = ["I1", "I2", "O"]
    accelerator = {
        "name": "os16_sram",
        "memories": {
            "reg_I": reg("I1", 8), "reg_W": reg("I2", 8), "reg_O": reg("O", 32),
            "sram": {
                "size": sram_bytes * 8, "r_cost": SRAM_READ_PJ, "w_cost": SRAM_WRITE_PJ,
                "area": 0, "latency": 1, "operands": all_ops,
                "ports": [_port("r_port_1", "read", SRAM_BITS,
                                ["I1, tl", "I2, tl", "O, tl", "O, th"]),
                          _port("w_port_1", "write", SRAM_BITS,
                                ["I1, fh", "I2, fh", "O, fh", "O, fl"])],
                "served_dimensions": ["D1", "D2"]},
            "dram": {
                "size": 10**10, "r_cost": DRAM_PJ, "w_cost": DRAM_PJ, "area": 0, "latency": 1,
                "operands": all_ops,
                "ports": [_port("rw_port_1", "read_write", DRAM_BITS,
                                ["I1, fh", "I1, tl", "I2, fh", "I2, tl", "O, fh", "O, tl",
                                 "O, fl", "O, th"])],
                "served_dimensions": ["D1", "D2"]},
        },
        "operational_array": {"unit_energy": MAC_PJ, "unit_area": 1, "dimensions": ["D1", "D2"],
                              "sizes": [ROWS, COLS]},
    }
    # output-stationary: PE (b, k) keeps O[b][k]; C runs innermost; folds over K, then B
    mapping = [{"name": name, "spatial_mapping": {"D1": [f"K, {COLS}"], "D2": [f"B, {ROWS}"]},
                "temporal_ordering": [["C", K], ["K", N // COLS], ["B", M // ROWS]],
                "memory_operand_links": {"O": "O", "W": "I2", "I": "I1"}}
               for name in ("default", "Gemm")]  # ZigZag requires a 'default' entry
    if search:
        for m in mapping:
            del m["temporal_ordering"]
    return workload, accelerator, mapping


ZIGZAG_RUNNER = r"""
import json, logging, sys
logging.disable(logging.CRITICAL)
from zigzag.api import get_hardware_performance_zigzag
from zigzag.hardware.architecture.memory_port import DataDirection
d = sys.argv[1]
energy, latency, cmes = get_hardware_performance_zigzag(
    f"{d}/workload.yaml", f"{d}/accelerator.yaml", f"{d}/mapping.yaml", opt="energy",
    dump_folder=f"{d}/out", loma_show_progress_bar=False)
cme = cmes[0][1][0][0]
names = {"I": "input", "W": "weight", "O": "output"}
rows = []
for op, levels in cme.memory_word_access.items():
    mem_op = cme.memory_operand_links.layer_to_mem_op(op)
    mems = cme.accelerator.memory_hierarchy.get_memory_levels(mem_op=mem_op)
    energies = cme.mem_energy_breakdown_further[op]
    for acc, mem, en in zip(levels, mems, energies):
        for key, direction in (("rd_out_to_low", "read"), ("rd_out_to_high", "read"),
                               ("wr_in_by_high", "write"), ("wr_in_by_low", "write")):
            dd = DataDirection(key)
            n = acc.get(dd)
            if not n:
                continue
            bits = mem.get_max_bandwidth(mem_op, dd)
            rows.append({"tool_level": mem.name, "operand": names[str(op)], "direction": direction,
                         "path": key, "accesses": n, "bits": n * bits, "pj": en.get(dd)})
print(json.dumps({"energy_pj": energy, "mac_pj": cme.mac_energy, "latency_cycles": latency,
                  "temporal_mapping": str(cme.temporal_mapping), "rows": rows}))
"""


def run_zigzag(python: str, sram_bytes: int = SRAM_BYTES, search: bool = False) -> dict:
    """Run ZigZag in ``python`` (its own venv); return its access and energy records."""
    workload, accelerator, mapping = zigzag_inputs(sram_bytes, search)
    with tempfile.TemporaryDirectory() as d:
        for name, doc in (("workload", workload), ("accelerator", accelerator),
                          ("mapping", mapping)):
            Path(d, f"{name}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
        proc = subprocess.run([python, "-c", ZIGZAG_RUNNER, d], capture_output=True, text=True,
                              timeout=600, cwd=d)
    if proc.returncode != 0:
        sys.exit(f"ZigZag failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------- accelsim side


def accelsim_inputs(d: Path, sram_bytes: int = SRAM_BYTES) -> tuple[Path, Path]:
    """(hardware YAML, energy YAML) of the same accelerator, written under ``d``."""
    energy = {"name": "zigzag_compare", "node_nm": 28, "voltage_v": 0.9,
              "sources": ["ZigZag 3.9.1 inputs/hardware/tpu_like.yaml per-access costs"],
              "mac": {"int8": f"{MAC_PJ} pJ"},
              "register": {"read_per_bit": f"{REG_PJ_PER_BIT} pJ/bit",
                           "write_per_bit": f"{REG_PJ_PER_BIT} pJ/bit"},
              "sram": {"reference_word_bits": SRAM_BITS,
                       "read": {f"{sram_bytes} B": f"{SRAM_READ_PJ} pJ"},
                       "write": {f"{sram_bytes} B": f"{SRAM_WRITE_PJ} pJ"}},
              "dram_per_bit": {"LPDDR4": f"{DRAM_PJ / DRAM_BITS} pJ/bit"}}
    epath = d / "zigzag_compare_energy.yaml"
    epath.write_text(yaml.safe_dump(energy, sort_keys=False))
    hw = {"kind": "systolic", "name": "os16_sram", "clock_hz": CLOCK_HZ,
          "compute": {"array": {"rows": ROWS, "cols": COLS, "dataflow": "os", "precision": "int8",
                                "output_word_bytes": 1}},
          "memory": {"sram": {"capacity_bytes": sram_bytes, "word_bits": SRAM_BITS},
                     "dram": {"technology": "LPDDR4",
                              "bandwidth_bytes_per_s": DRAM_BITS / 8 * CLOCK_HZ}},
          "energy": {"table": str(epath)}}
    hpath = d / "os16_sram.yaml"
    hpath.write_text(yaml.safe_dump(hw, sort_keys=False))
    return hpath, epath


def run_accelsim(sram_bytes: int = SRAM_BYTES) -> tuple[pd.DataFrame, dict]:
    """Simulate the GEMM in accelsim; return priced action records and the totals."""
    from accelsim.api import simulate
    from accelsim.workload.ops import Gemm

    with tempfile.TemporaryDirectory() as d:
        hw, _ = accelsim_inputs(Path(d), sram_bytes)
        r = simulate(hw, [Gemm(name="gemm", m=M, n=N, k=K)], dataflow="os", mode="event")
    return r.energy.priced, {"energy_pj": r.energy.summary["total_pj"],
                             "cycles": int(r.layers["total_cycles"].sum())}


# ------------------------------------------------------------------------------ comparison

ZZ_LEVEL = {"reg_I": "rf", "reg_W": "rf", "reg_O": "rf", "sram": "sram", "dram": "dram"}


def compare(zz: dict, priced: pd.DataFrame) -> pd.DataFrame:
    """Side-by-side table: level, operand, direction, bits and pJ in each tool, rel. diffs."""
    z = pd.DataFrame(zz["rows"])
    z["level"] = z["tool_level"].map(ZZ_LEVEL)
    z = z.groupby(["level", "operand", "direction"], as_index=False)[["bits", "pj"]].sum()
    a = priced.copy()
    a["operand"] = a["operand"].replace({"psum": "output"})  # ZigZag's O holds psums too
    a = a[a["level"] != "mac"].groupby(["level", "operand", "direction"], as_index=False)[
        ["bits", "pj"]].sum()
    t = a.merge(z, on=["level", "operand", "direction"], how="outer",
                suffixes=("_accelsim", "_zigzag")).fillna(0.0)
    mac = pd.DataFrame([{"level": "mac", "operand": "-", "direction": "compute",
                         "bits_accelsim": 0.0, "bits_zigzag": 0.0,
                         "pj_accelsim": float(priced[priced["level"] == "mac"]["pj"].sum()),
                         "pj_zigzag": zz["mac_pj"]}])
    t = pd.concat([mac, t], ignore_index=True)
    order = {"mac": 0, "rf": 1, "sram": 2, "dram": 3}
    t = t.sort_values(["level", "operand", "direction"],
                      key=lambda s: s.map(order) if s.name == "level" else s).reset_index(drop=True)
    total = {"level": "total", "operand": "", "direction": "",
             "bits_accelsim": t["bits_accelsim"].sum(), "bits_zigzag": t["bits_zigzag"].sum(),
             "pj_accelsim": t["pj_accelsim"].sum(), "pj_zigzag": t["pj_zigzag"].sum()}
    t = pd.concat([t, pd.DataFrame([total])], ignore_index=True)
    for q in ("bits", "pj"):
        ref = t[f"{q}_zigzag"]
        t[f"{q}_rel_diff"] = (t[f"{q}_accelsim"] - ref) / ref.where(ref != 0)
    return t


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--zigzag-python", default="/work/zzvenv/bin/python",
                   help="python of the venv with zigzag-dse==3.9.1 and six")
    p.add_argument("--sram-bytes", type=int, default=SRAM_BYTES,
                   help=f"on-chip SRAM capacity, bytes (default {SRAM_BYTES} = 1 MiB)")
    p.add_argument("--search", action="store_true",
                   help="let ZigZag search the loop order (default: accelsim's fold order)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = p.parse_args(argv)
    zz = run_zigzag(args.zigzag_python, args.sram_bytes, args.search)
    priced, acc = run_accelsim(args.sram_bytes)
    t = compare(zz, priced)
    if args.json:
        print(json.dumps({"table": t.to_dict(orient="records"), "accelsim": acc,
                          "zigzag": {k: zz[k] for k in ("energy_pj", "latency_cycles",
                                                         "temporal_mapping")}},
                         indent=1, default=float))
        return 0
    pd.set_option("display.width", 200)
    print(f"{M}x{N}x{K} int8 GEMM on a {ROWS}x{COLS} OS array, {args.sram_bytes:,} B SRAM, DRAM "
          "(same per-access costs in both tools); bits moved and pJ")
    print(t.to_string(index=False, float_format=lambda v: f"{v:,.4g}"))
    print(f"\ncycles: accelsim {acc['cycles']:,} vs ZigZag {zz['latency_cycles']:,.0f}")
    print(f"ZigZag temporal mapping (innermost first, per operand and level): "
          f"{zz['temporal_mapping']}")
    big = t[(t["pj_rel_diff"].abs() > 0.05) | (t["bits_rel_diff"].abs() > 0.05)]
    if len(big):
        print("differences above 5 % (explained in accelsim/report/ENERGY.md):")
        for r in big.itertuples():
            print(f"  {r.level} {r.operand} {r.direction}: bits {r.bits_rel_diff:+.1%}, "
                  f"energy {r.pj_rel_diff:+.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
