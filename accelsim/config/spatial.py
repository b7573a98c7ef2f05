"""Parameters of a spatial (Eyeriss-style) PE array: per-PE scratchpads and the array network.

A machine whose ``compute.array`` has ``scratchpads`` can run the row-stationary dataflow
(:mod:`accelsim.hw.dataflows.row_stationary`); one without them cannot (``rs`` is refused with
the machine, field and value). Sizes are bytes; a word is the array's operand precision.

Imports: config.schema.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelsim.config.schema import fraction, non_negative, param, positive


@dataclass(frozen=True, slots=True, kw_only=True)
class Scratchpads:
    """The three scratchpads inside every PE (Eyeriss: filter, ifmap and psum spads)."""

    filter_bytes: float = param("Filter-weight scratchpad per PE, bytes (Eyeriss: 224 x 16 b).",
                                check=positive)
    ifmap_bytes: float = param("Input-activation scratchpad per PE, bytes (Eyeriss: 12 x 16 b).",
                               check=positive)
    psum_bytes: float = param("Partial-sum scratchpad per PE, bytes (Eyeriss: 24 x 16 b).",
                              check=positive)


@dataclass(frozen=True, slots=True, kw_only=True)
class ArrayNetwork:
    """Global buffer partition and on-chip networks between it and the PEs (row-stationary).

    The global input network (GIN) multicasts one word to every PE that needs it in one cycle;
    its bus width sets how many distinct words enter the array per cycle.
    """

    fmap_buffer_fraction: float = param(
        "Share of the global buffer holding ifmaps and psums (Eyeriss: 100 of 108 kB); the "
        "rest holds the filters of the next pass.", default=1.0, check=fraction)
    filter_words_per_cycle: float = param(
        "Distinct filter words the filter GIN delivers per cycle (Eyeriss: 64-bit bus = 4).",
        default=4.0, check=positive)
    ifmap_words_per_cycle: float = param(
        "Distinct ifmap words the ifmap GIN delivers per cycle (Eyeriss: 16-bit bus = 1).",
        default=1.0, check=positive)
    psum_words_per_cycle: float = param(
        "Psum words the psum GIN / global output network move per cycle (Eyeriss: 64-bit = 4).",
        default=4.0, check=positive)
    full_height_sets: bool = param(
        "A PE set spans all E ofmap rows of the layer, folded into segments, whenever the "
        "folded set fits the array; strip-mining only when it does not (Eyeriss: JSSC 2017 "
        "Sec. IV-A, Table III e = E for AlexNet CONV2-5). False: any strip width is searched.",
        default=False)
    pass_setup_cycles: int = param(
        "Fixed cycles to start a processing pass (controller hand-shake, PE pipeline fill).",
        default=0, check=non_negative)
    rlc: bool = param(
        "Run-length compression of feature maps on the DRAM interface (not the first layer's "
        "input, as on Eyeriss).", default=False)
    zero_gating: bool = param(
        "Skip the filter-spad read and the MAC when the ifmap value is zero (energy, not time).",
        default=False)
    overlap_fmap_io: bool = param(
        "Whether ifmap loads and ofmap stores to DRAM overlap processing (Eyeriss as measured: "
        "false; filters are always prefetched).", default=True)
