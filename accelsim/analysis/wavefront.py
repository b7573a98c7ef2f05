"""Element-level schedule of a weight-stationary systolic array (the textbook wavefront).

PE(k, j) holds weight ``B[k][j]``; input ``A[i][k]`` enters row ``k`` at the left edge at
cycle ``i + k`` (one cycle of skew per row) and moves one PE right per cycle; partial sums
move one PE down per cycle. So ``A[i][k]`` meets ``B[k][j]`` at cycle ``i + k + j`` and
``C[i][j]`` leaves the bottom PE ``(K-1, j)`` at cycle ``i + j + K - 1``. The compute span of
``M`` input rows is ``M + N + K - 2`` cycles (weights already resident); loading the weights
adds ``K`` cycles, which gives the fold length ``2K + N + M - 2`` of
:func:`accelsim.hw.systolic.geometry` (dataflow ``ws``, R = K, C = N, T = M).

Used for teaching and by the validation suite; the layer-level timing model is
:mod:`accelsim.hw.systolic`.

Imports: stdlib.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Wavefront:
    """Cycle of every event of one ws pass (cycle 0 = first MAC)."""

    m: int
    k: int
    n: int
    inject: dict = field(default_factory=dict)
    """(i, k) -> cycle ``A[i][k]`` enters row ``k``."""
    mac: dict = field(default_factory=dict)
    """(i, k, j) -> cycle PE(k, j) multiplies ``A[i][k] * B[k][j]``."""
    complete: dict = field(default_factory=dict)
    """(i, j) -> cycle ``C[i][j]`` is complete (leaves PE(K-1, j))."""

    @property
    def span(self) -> int:
        """Cycles from the first to the last MAC, inclusive: ``M + N + K - 2``."""
        return max(self.mac.values()) + 1

    def schedule_text(self) -> dict[str, str]:
        """``{"cycle<t>": "PE<k><j> A<i><k>*B<k><j>[+psum][ -> C<i><j>]; ..."}``, PEs row-major."""
        out: dict[str, list[tuple[tuple[int, int], str]]] = {}
        for (i, k, j), t in self.mac.items():
            text = f"PE{k}{j} A{i}{k}*B{k}{j}" + ("+psum" if k > 0 else "")
            if k == self.k - 1:
                text += f" -> C{i}{j}"
            out.setdefault(f"cycle{t}", []).append(((k, j), text))
        return {c: "; ".join(s for _, s in sorted(v)) for c, v in
                sorted(out.items(), key=lambda kv: int(kv[0][5:]))}

    def injection_text(self) -> dict[str, str]:
        """``{"row<k>": "A<i><k>@<cycle>, ..."}``: what enters each row's left edge, when."""
        rows: dict[int, list[tuple[int, str]]] = {}
        for (i, k), t in self.inject.items():
            rows.setdefault(k, []).append((t, f"A{i}{k}@{t}"))
        return {f"row{k}": ", ".join(s for _, s in sorted(v)) for k, v in sorted(rows.items())}


def ws_wavefront(*, m: int, k: int, n: int) -> Wavefront:
    """The schedule of ``M`` input rows through a ``K x N`` weight-stationary array."""
    w = Wavefront(m, k, n)
    for i in range(m):
        for kk in range(k):
            w.inject[(i, kk)] = i + kk
            for j in range(n):
                w.mac[(i, kk, j)] = i + kk + j
        for j in range(n):
            w.complete[(i, j)] = i + j + k - 1
    return w
