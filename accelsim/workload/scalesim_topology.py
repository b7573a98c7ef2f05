"""SCALE-Sim topology CSVs: the one reader, and its two views of the rows.

Rows: a header line (always skipped), then ``name, H, W, Fh, Fw, C, Nf, stride`` (conv; padding
already in H and W) or ``name, M, N, K`` (gemm), a trailing comma optional, an extra ``N:M``
sparsity column ignored (SCALE-Sim 3.0 ``topology_utils.py``). Every value is a positive
integer at most :data:`~accelsim.limits.MAX_DIM`; a file too large, not UTF-8 or with a field
longer than :data:`~accelsim.limits.MAX_CSV_FIELD_BYTES` is refused; an error names the file,
the row and the column.

Two views of the same rows:

* :func:`topology_workload` (``accelsim run``, sweeps): the operators the file describes, one
  per row. Output size ``floor((H - Fh) / S) + 1``, as frameworks compute it; a conv whose
  name contains ``DP`` is depthwise: a grouped convolution with ``groups = C`` and ``Nf``
  filters per channel (``K = C x Nf``).
* :func:`scalesim_layers` (``accelsim scalesim``): SCALE-Sim's own layer list, quirks
  included: output size ``ceil((H - Fh + S) / S)`` (a partial last window counts) and a
  ``DP`` layer split into ``C`` single-channel layers ``<name>Channel_<i>``, each with ``Nf``
  filters. Its MACs equal the grouped convolution's.

Imports: errors, files, limits, workload.ops.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from accelsim.errors import ConfigError, WorkloadError
from accelsim.files import locate
from accelsim.limits import MAX_CSV_FIELD_BYTES, MAX_DIM, check_file_size, check_number
from accelsim.workload.ops import Conv2d, Gemm, Workload

INPUT_TYPES = ("conv", "gemm")
CONV_COLUMNS = ("IFMAP Height", "IFMAP Width", "Filter Height", "Filter Width", "Channels",
                "Num Filter", "Strides")
GEMM_COLUMNS = ("M", "N", "K")


@dataclass(frozen=True, slots=True)
class TopologyRow:
    """One layer row as written: its line number, name and integer values."""

    line: int
    name: str
    values: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ScaleSimLayer:
    """One SCALE-Sim layer (one report row): its GEMM and the operator accelsim plans."""

    name: str
    op: Conv2d | Gemm
    m: int
    n: int
    k: int
    input_hw: tuple[int, int] | None = None
    """A convolution's input (H, W) as written, when its last window is partial; else None."""

    @property
    def macs(self) -> int:
        """MACs as SCALE-Sim counts them (``Ho*Wo*Nf * Fh*Fw*C``)."""
        return self.m * self.n * self.k


def _ratio(text: str) -> bool:
    parts = text.strip().split(":")
    return len(parts) == 2 and all(p.strip().isdigit() for p in parts)


def _positive_int(file: str, line: int, column: str, text: str) -> int:
    """A cell as a dimension: a whole, finite, positive number <= MAX_DIM."""
    field = f"row {line} column '{column}'"
    try:
        v: float | int = int(text)
    except ValueError:
        try:
            v = float(text)
        except ValueError:
            raise WorkloadError(file, field, text, "not a number") from None
    try:
        return int(check_number(v, file=file, field=field, integer=True, positive=True,
                                maximum=MAX_DIM, shown=text))
    except ConfigError as exc:
        raise WorkloadError(file, field, text,
                            f"must be a positive integer ({exc.reason})") from None


def _read_lines(path: str | os.PathLike, file: str) -> list[str]:
    """The lines of a topology file: not a directory, size-checked, UTF-8, every field at most
    MAX_CSV_FIELD_BYTES long."""
    where = locate(path)
    if os.path.isdir(where):
        raise WorkloadError(file, None, None, "is a directory, expected a CSV file")
    check_file_size(where, file=file)
    try:
        lines = Path(where).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise WorkloadError(file, None, None, f"cannot read file ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise WorkloadError(file, None, None, f"not UTF-8 text (offset {exc.start}): "
                            "a binary file?") from None
    for n, line in enumerate(lines, start=1):
        if len(line) > MAX_CSV_FIELD_BYTES and \
                any(len(f) > MAX_CSV_FIELD_BYTES for f in line.split(",")):
            raise WorkloadError(file, f"row {n}", None,
                                f"a field longer than {MAX_CSV_FIELD_BYTES:,} characters")
    return lines


def read_rows(path: str | os.PathLike, input_type: str = "auto") -> tuple[str, list[TopologyRow]]:
    """``(input_type, rows)`` of a topology CSV; ``auto`` picks ``gemm`` for a 4-column header.

    A conv filter larger than its input, a row with the wrong number of columns, a value that
    is not a positive integer, or a file without layers is a :class:`WorkloadError`.
    """
    file = str(path)
    lines = _read_lines(path, file)
    header = [c.strip() for c in lines[0].split(",")] if lines else []
    if header and header[-1] == "":
        header = header[:-1]
    if input_type == "auto":
        input_type = "gemm" if len(header) == 4 else "conv"
    if input_type not in INPUT_TYPES:
        raise WorkloadError(file, "input type", input_type, "must be conv or gemm")
    names = GEMM_COLUMNS if input_type == "gemm" else CONV_COLUMNS
    need = 1 + len(names)
    rows = []
    for line_no, raw in enumerate(lines[1:], start=2):
        fields = [f.strip() for f in raw.split(",")]
        if fields and fields[-1] == "":
            fields = fields[:-1]          # the trailing comma ends the row
        if not any(fields):
            continue
        if len(fields) == need + 1 and _ratio(fields[-1]):
            fields = fields[:-1]          # an N:M sparsity column (sparsity is off)
        if len(fields) != need:
            raise WorkloadError(file, f"row {line_no}", raw.strip(),
                                f"expected {need} columns (name, {', '.join(names)}), "
                                f"got {len(fields)}")
        vals = tuple(_positive_int(file, line_no, c, t) for c, t in zip(names, fields[1:]))
        if input_type == "conv" and (vals[2] > vals[0] or vals[3] > vals[1]):
            raise WorkloadError(file, f"row {line_no}", raw.strip(),
                                f"filter {vals[2]}x{vals[3]} larger than the input "
                                f"{vals[0]}x{vals[1]}")
        rows.append(TopologyRow(line_no, fields[0] or f"layer{len(rows) + 1}", vals))
    if not rows:
        raise WorkloadError(file, "row 2", None,
                            "no layers (the first line is a header; one layer per row after it)")
    return input_type, rows


def is_depthwise(name: str) -> bool:
    """SCALE-Sim's convention: a conv layer whose name contains ``DP`` is depthwise."""
    return "DP" in name


def row_op(row: TopologyRow, input_type: str) -> Conv2d | Gemm:
    """The operator a row describes (see the module docstring)."""
    if input_type == "gemm":
        m, n, k = row.values
        return Gemm(name=row.name, m=m, n=n, k=k)
    h, w, fh, fw, c, nf, s = row.values
    if is_depthwise(row.name):
        return Conv2d(name=row.name, c=c, h=h, w=w, k=c * nf, r=fh, s=fw, stride=s, groups=c)
    return Conv2d(name=row.name, c=c, h=h, w=w, k=nf, r=fh, s=fw, stride=s)


def topology_workload(path: str | os.PathLike, input_type: str = "auto") -> Workload:
    """The operators of a topology CSV, one per row, as a :class:`Workload`."""
    kind, rows = read_rows(path, input_type)
    return Workload(Path(path).stem, tuple(row_op(r, kind) for r in rows), str(path))


def scalesim_layers(path: str | os.PathLike, input_type: str = "conv") -> list[ScaleSimLayer]:
    """SCALE-Sim's layer list for a topology CSV (see the module docstring)."""
    kind, rows = read_rows(path, input_type)
    layers: list[ScaleSimLayer] = []
    for row in rows:
        if kind == "gemm":
            m, n, k = row.values
            layers.append(ScaleSimLayer(row.name, row_op(row, kind), m, n, k))
            continue
        h, w, fh, fw, c, nf, s = row.values
        ho = -(-(h - fh + s) // s)
        wo = -(-(w - fw + s) // s)
        # the input extent the windows span (> h only when the last window is partial)
        hs, ws = (ho - 1) * s + fh, (wo - 1) * s + fw
        partial = (hs, ws) != (h, w)
        channels = ([(f"{row.name}Channel_{i}", 1) for i in range(c)]
                    if is_depthwise(row.name) else [(row.name, c)])
        for lname, cin in channels:
            op = Conv2d(name=lname, c=cin, h=hs, w=ws, k=nf, r=fh, s=fw, stride=s)
            layers.append(ScaleSimLayer(lname, op, ho * wo, nf, fh * fw * cin,
                                        (h, w) if partial else None))
    return layers
