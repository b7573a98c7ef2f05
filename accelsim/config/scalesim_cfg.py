"""SCALE-Sim's own ``.cfg`` files -> a :class:`SystolicMachine` plus SCALE-Sim's run options.

SCALE-Sim 3.0 reads its configuration with :mod:`configparser` (option names are
case-insensitive), from these sections::

    [general]               run_name
    [architecture_presets]  ArrayHeight, ArrayWidth, IfmapSramSzkB, FilterSramSzkB,
                            OfmapSramSzkB, IfmapOffset, FilterOffset, OfmapOffset,
                            Dataflow, Bandwidth, ReadRequestBuffer, WriteRequestBuffer
    [layout]                IfmapCustomLayout, IfmapSRAMBankBandwidth, IfmapSRAMBankNum,
                            IfmapSRAMBankPort, and the same four for Filter
    [sparsity]              SparsitySupport (+ SparseRep, OptimizedMapping, BlockSize, ...)
    [run_presets]           InterfaceBandwidth (USER | CALC), UseRamulatorTrace

How the values become an accelsim machine (``accelsim/report/SCALESIM.md`` says why):

* words are 1 byte (SCALE-Sim hard-codes ``word_size = 1``), so ``XSramSzkB`` kB hold
  ``XSramSzkB * 1024`` words; the three SRAMs become one operand SRAM split in their ratio;
* SCALE-Sim counts cycles only; the machine runs at 1 GHz so that 1 word/cycle = 1 GB/s;
* ``InterfaceBandwidth: CALC`` (SCALE-Sim's default): reads never stall in SCALE-Sim, so the
  DRAM bandwidth is unlimited. SCALE-Sim drains the OFMAP at ``ArrayWidth`` words/cycle in
  this mode, which is the array's peak output rate; accelsim's single DMA queue cannot give
  writes their own bandwidth, so writes are unlimited too;
* ``InterfaceBandwidth: USER``: SCALE-Sim has three independent channels, IFMAP at
  ``IfmapSRAMBankBandwidth``, filter at ``FilterSRAMBankBandwidth`` and OFMAP at
  ``Bandwidth`` (first element) words/cycle. accelsim has one DMA queue to DRAM; it gets
  their sum, the interface's peak;
* DRAM latency is SCALE-Sim's read-port latency: 1 cycle.

Features SCALE-Sim has and accelsim does not model (sparsity, custom SRAM layouts,
Ramulator traces) are refused with :class:`UnsupportedError` rather than silently ignored.

Imports: stdlib, errors, files, config.schema, config.systolic_machine.
"""

from __future__ import annotations

import configparser
import difflib
import io
import os
from dataclasses import dataclass
from pathlib import Path

from accelsim.config.schema import build
from accelsim.config.systolic_machine import SystolicMachine
from accelsim.errors import ConfigError, UnsupportedError
from accelsim.files import config_dir, locate, write_output

CLOCK_HZ = 1e9
"""Clock given to SCALE-Sim machines (SCALE-Sim counts cycles only): 1 word/cycle = 1 GB/s."""

WORD_BYTES = 1
"""SCALE-Sim's hard-coded word size, bytes."""

READ_PORT_LATENCY_CYCLES = 1
"""SCALE-Sim's DRAM read-port latency, cycles."""

SECTIONS = ("general", "architecture_presets", "layout", "sparsity", "run_presets")
"""The sections SCALE-Sim 3.0 reads (``network_presets`` is also accepted)."""

_KNOWN_KEYS = {
    "general": {"run_name"},
    "architecture_presets": {"arrayheight", "arraywidth", "ifmapsramszkb", "filtersramszkb",
                             "ofmapsramszkb", "ifmapoffset", "filteroffset", "ofmapoffset",
                             "dataflow", "bandwidth", "memorybanks", "readrequestbuffer",
                             "writerequestbuffer"},
    "layout": {"ifmapcustomlayout", "ifmapsrambankbandwidth", "ifmapsrambanknum",
               "ifmapsrambankport", "filtercustomlayout", "filtersrambankbandwidth",
               "filtersrambanknum", "filtersrambankport"},
    "sparsity": {"sparsitysupport", "sparserep", "optimizedmapping", "blocksize",
                 "randomnumbergeneratorseed", "nonzeroelems"},
    "run_presets": {"interfacebandwidth", "useramulatortrace"},
    "network_presets": {"topologycsvloc"},
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ScaleSimConfig:
    """A SCALE-Sim ``.cfg`` file, resolved: the machine and SCALE-Sim's own run options."""

    file: str
    """The ``.cfg`` path it was read from."""
    run_name: str
    """``[general] run_name``: reports go to ``OUTDIR/<run_name>/``."""
    machine: SystolicMachine
    """The machine accelsim simulates (array, SRAM split, DRAM queue)."""
    interface_bandwidth: str
    """``CALC`` (reads never stall) or ``USER`` (the bandwidths below)."""
    ifmap_sram_kb: int
    """IFMAP SRAM, kB of 1-byte words (``kB * 1024`` words)."""
    filter_sram_kb: int
    """Filter SRAM, kB of 1-byte words."""
    ofmap_sram_kb: int
    """OFMAP SRAM, kB of 1-byte words."""
    ifmap_dram_words_per_cycle: float
    """IFMAP DRAM->SRAM bandwidth SCALE-Sim uses, words/cycle (inf in CALC mode)."""
    filter_dram_words_per_cycle: float
    """Filter DRAM->SRAM bandwidth SCALE-Sim uses, words/cycle (inf in CALC mode)."""
    ofmap_dram_words_per_cycle: float
    """OFMAP SRAM->DRAM bandwidth SCALE-Sim uses, words/cycle (ArrayWidth in CALC mode)."""
    bandwidths: tuple[int, ...] = ()
    """``Bandwidth`` list as written (read in USER mode only, as SCALE-Sim does)."""
    offsets: tuple[int, int, int] = (0, 10000000, 20000000)
    """IFMAP, filter, OFMAP address offsets (they only label trace addresses)."""
    topology: str = ""
    """``[network_presets] TopologyCsvLoc`` when given (used when no topology is passed)."""

    @property
    def dataflow(self) -> str:
        """``os``, ``ws`` or ``is``."""
        return self.machine.array.dataflow

    @property
    def rows(self) -> int:
        """ArrayHeight."""
        return self.machine.array.rows

    @property
    def cols(self) -> int:
        """ArrayWidth."""
        return self.machine.array.cols


class _Reader:
    """Typed access to one parsed cfg with errors naming ``file: section.Key = value``."""

    def __init__(self, parser: configparser.ConfigParser, file: str) -> None:
        self.p = parser
        self.file = file

    def has(self, section: str, key: str) -> bool:
        return self.p.has_section(section) and self.p.has_option(section, key)

    def text(self, section: str, key: str, default: str | None = None) -> str:
        if not self.p.has_section(section):
            if default is not None:
                return default
            raise ConfigError(self.file, f"[{section}]", None, "missing section")
        if not self.p.has_option(section, key):
            if default is not None:
                return default
            raise ConfigError(self.file, f"{section}.{key}", None, "missing key")
        return self.p.get(section, key).strip()

    def integer(self, section: str, key: str, default: int | None = None, *,
                minimum: int | None = None) -> int:
        raw = self.text(section, key, None if default is None else str(default))
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(self.file, f"{section}.{key}", raw, "expected an integer") from None
        if minimum is not None and value < minimum:
            raise ConfigError(self.file, f"{section}.{key}", raw, f"must be >= {minimum}")
        return value

    def boolean(self, section: str, key: str, default: bool) -> bool:
        raw = self.text(section, key, str(default))
        low = raw.lower()
        if low in ("true", "yes", "on", "1"):
            return True
        if low in ("false", "no", "off", "0"):
            return False
        raise ConfigError(self.file, f"{section}.{key}", raw, "expected True or False")

    def choice(self, section: str, key: str, choices: tuple[str, ...],
               default: str | None = None) -> str:
        raw = self.text(section, key, default)
        for c in choices:
            if raw.lower() == c.lower():
                return c
        near = difflib.get_close_matches(raw, list(choices), n=1)
        hint = f" (did you mean '{near[0]}'?)" if near else ""
        raise ConfigError(self.file, f"{section}.{key}", raw,
                          f"must be one of {', '.join(choices)}{hint}")


def _parse(path: Path) -> configparser.ConfigParser:
    file = str(path)
    parser = configparser.ConfigParser(interpolation=None)
    try:
        with open(path, encoding="utf-8") as fh:
            parser.read_file(fh, source=file)
    except OSError as exc:
        raise ConfigError(file, None, None, f"cannot read file ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ConfigError(file, None, None, "not a text file") from None
    except configparser.Error as exc:
        line = getattr(exc, "lineno", None)
        where = f" at line {line}" if line else ""
        first = str(exc).splitlines()[0]
        raise ConfigError(file, None, None, f"not a SCALE-Sim cfg file{where}: {first}") from None
    for section in parser.sections():
        known = _KNOWN_KEYS.get(section)
        if known is None:
            near = difflib.get_close_matches(section, list(_KNOWN_KEYS), n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else f" (known: {', '.join(SECTIONS)})"
            raise ConfigError(file, f"[{section}]", None, "unknown section" + hint)
        for key in parser.options(section):
            if key not in known:
                near = difflib.get_close_matches(key, sorted(known), n=1)
                hint = f" (did you mean '{near[0]}'?)" if near else ""
                raise ConfigError(file, f"{section}.{key}", parser.get(section, key),
                                  "unknown key" + hint)
    return parser


def read_scalesim_cfg(path: str | os.PathLike) -> ScaleSimConfig:
    """Read a SCALE-Sim 3.0 ``.cfg`` file into a :class:`ScaleSimConfig`.

    ``[general]``, ``[architecture_presets]`` and ``[run_presets]`` are required, as are the
    array shape, the three SRAM sizes and the dataflow; ``[layout]`` and ``[sparsity]``
    default to "off" (older SCALE-Sim cfg files lack them). Any bad value raises
    :class:`ConfigError` naming the file, ``section.Key`` and the value.
    """
    file = str(path)
    r = _Reader(_parse(locate(path)), file)
    arch = "architecture_presets"
    run_name = r.text("general", "run_name")
    if not run_name or "/" in run_name or run_name in (".", ".."):
        raise ConfigError(file, "general.run_name", run_name, "must be a plain folder name")
    mode = r.choice("run_presets", "InterfaceBandwidth", ("CALC", "USER"))
    if r.boolean("run_presets", "UseRamulatorTrace", False):
        raise UnsupportedError(f"{file}: run_presets.UseRamulatorTrace = True: Ramulator DRAM "
                               "traces are not modelled (set it to False)")
    rows = r.integer(arch, "ArrayHeight", minimum=1)
    cols = r.integer(arch, "ArrayWidth", minimum=1)
    kb = {name: r.integer(arch, f"{name}SramSzkB", minimum=1)
          for name in ("Ifmap", "Filter", "Ofmap")}
    dataflow = r.choice(arch, "Dataflow", ("os", "ws", "is"))
    offsets = (r.integer(arch, "IfmapOffset", 0, minimum=0),
               r.integer(arch, "FilterOffset", 10000000, minimum=0),
               r.integer(arch, "OfmapOffset", 20000000, minimum=0))
    for key in ("ReadRequestBuffer", "WriteRequestBuffer"):
        r.integer(arch, key, 32, minimum=1)
    for operand in ("Ifmap", "Filter"):
        if r.boolean("layout", f"{operand}CustomLayout", False):
            raise UnsupportedError(f"{file}: layout.{operand}CustomLayout = True: custom SRAM "
                                   "layouts (bank conflicts) are not modelled (set it to False)")
    bank_bw = {}
    for operand in ("Ifmap", "Filter"):
        bank_bw[operand] = r.integer("layout", f"{operand}SRAMBankBandwidth", 10, minimum=1)
        banks = r.integer("layout", f"{operand}SRAMBankNum", 10, minimum=1)
        r.integer("layout", f"{operand}SRAMBankPort", 2, minimum=1)
        if mode == "USER" and bank_bw[operand] % banks:
            raise ConfigError(file, f"layout.{operand}SRAMBankBandwidth", bank_bw[operand],
                              f"must be a multiple of {operand}SRAMBankNum = {banks}")
    if r.boolean("sparsity", "SparsitySupport", False):
        raise UnsupportedError(f"{file}: sparsity.SparsitySupport = true: structured sparsity "
                               "is not modelled (set it to false)")
    bandwidths: tuple[int, ...] = ()
    if mode == "USER":
        raw = r.text(arch, "Bandwidth")
        try:
            bandwidths = tuple(int(x.strip()) for x in raw.split(","))
        except ValueError:
            raise ConfigError(file, f"{arch}.Bandwidth", raw,
                              "expected integers (words/cycle), comma-separated") from None
        if not bandwidths or min(bandwidths) <= 0:
            raise ConfigError(file, f"{arch}.Bandwidth", raw, "must be > 0 words/cycle")
        ifmap_bw, filter_bw = float(bank_bw["Ifmap"]), float(bank_bw["Filter"])
        ofmap_bw = float(bandwidths[0])
        dram_words = ifmap_bw + filter_bw + ofmap_bw
    else:
        ifmap_bw = filter_bw = float("inf")
        ofmap_bw = float(cols)
        dram_words = float("inf")
    topology = ""
    if r.has("network_presets", "TopologyCsvLoc"):
        topology = r.text("network_presets", "TopologyCsvLoc").strip().strip('"').strip("'")
    machine = scalesim_machine(run_name, rows, cols, dataflow, kb["Ifmap"], kb["Filter"],
                               kb["Ofmap"], dram_words, file=file)
    return ScaleSimConfig(file=file, run_name=run_name, machine=machine,
                          interface_bandwidth=mode, ifmap_sram_kb=kb["Ifmap"],
                          filter_sram_kb=kb["Filter"], ofmap_sram_kb=kb["Ofmap"],
                          ifmap_dram_words_per_cycle=ifmap_bw,
                          filter_dram_words_per_cycle=filter_bw,
                          ofmap_dram_words_per_cycle=ofmap_bw, bandwidths=bandwidths,
                          offsets=offsets, topology=topology)


def scalesim_machine(name: str, rows: int, cols: int, dataflow: str, ifmap_kb: int,
                     filter_kb: int, ofmap_kb: int, dram_words_per_cycle: float, *,
                     file: str | None = None) -> SystolicMachine:
    """The accelsim machine for SCALE-Sim parameters (SRAM in kB of 1-byte words)."""
    total_kb = ifmap_kb + filter_kb + ofmap_kb
    data = {
        "kind": "systolic",
        "name": f"scalesim:{name}",
        "description": f"SCALE-Sim cfg {name}: {rows}x{cols} {dataflow}, "
                       f"{ifmap_kb}/{filter_kb}/{ofmap_kb} kB SRAM",
        "clock_hz": CLOCK_HZ,
        "compute": {"array": {"rows": rows, "cols": cols, "dataflow": dataflow,
                              "precision": "int8", "word_bytes": WORD_BYTES,
                              "output_word_bytes": WORD_BYTES, "psum_word_bytes": WORD_BYTES}},
        "memory": {
            "sram": {"capacity_bytes": float(total_kb * 1024 * WORD_BYTES),
                     "ifmap_fraction": ifmap_kb / total_kb,
                     "filter_fraction": filter_kb / total_kb,
                     "ofmap_fraction": 1.0 - ifmap_kb / total_kb - filter_kb / total_kb},
            "dram": {"bandwidth_bytes_per_s": dram_words_per_cycle * WORD_BYTES * CLOCK_HZ,
                     "latency_s": READ_PORT_LATENCY_CYCLES / CLOCK_HZ},
        },
        "sources": [f"SCALE-Sim cfg {file}" if file else "SCALE-Sim cfg"],
    }
    return build(SystolicMachine, data, file=file)


DEFAULT_CFG = config_dir("scalesim") / "scale.cfg"
"""SCALE-Sim 3.0's own ``scale.cfg``, shipped unchanged."""


def write_cfg_variant(out: str | os.PathLike, changes: dict[str, dict[str, object]],
                      base: str | os.PathLike = DEFAULT_CFG) -> Path:
    """Write a copy of SCALE-Sim cfg ``base`` with ``{section: {key: value}}`` changed.

    For sweeps and tests that run SCALE-Sim and accelsim on the same variants of one cfg.
    Keys keep SCALE-Sim's spelling; unknown sections are a :class:`ConfigError`.
    """
    parser = configparser.ConfigParser()
    parser.optionxform = str  # keep SCALE-Sim's key case in the written file
    parser.read(base)
    for section, items in changes.items():
        if not parser.has_section(section):
            raise ConfigError(str(base), section, None,
                              f"no such section (have: {', '.join(parser.sections())})")
        for key, value in items.items():
            parser.set(section, key, str(value))
    buf = io.StringIO()
    parser.write(buf)
    return write_output(out, buf.getvalue())
