"""Mapping-space accounting: how many mappings a mapper would have to consider, how a GEMM
tiles onto a fixed array, and how often a loop order reloads an operand.

These are the counting functions a mapper or auto-tuner uses to size its search and to
score loop orders; the validation suite (``accelsim validate``) checks them against the seed
chapter's worked examples.

Imports: stdlib.
"""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


def loop_orders(n_loops: int) -> int:
    """Orders of ``n_loops`` nested loops: ``n!``."""
    return math.factorial(n_loops)


def parallel_choices(n_loops: int, k_parallel: int) -> int:
    """Ordered choices of ``k_parallel`` of ``n_loops`` loops to spread over hardware axes:
    ``n! / (n-k)!``."""
    return math.perm(n_loops, k_parallel)


def placements(n_options: int, n_components: int, n_memories: int) -> int:
    """Upper bound on memory placements: ``n_options ** (n_components * n_memories)``."""
    return n_options ** (n_components * n_memories)


@dataclass(frozen=True, slots=True)
class EdgeTiles:
    """One dimension of ``dim`` elements cut into tiles of ``width`` (a fixed array side)."""

    dim: int
    width: int

    @property
    def tiles(self) -> int:
        """Tiles needed: ``ceil(dim / width)``."""
        return math.ceil(self.dim / self.width)

    @property
    def active_in_last(self) -> int:
        """Units busy in the last (remainder) tile."""
        return self.dim - (self.tiles - 1) * self.width

    @property
    def idle_in_last(self) -> int:
        """Units idle in the last tile."""
        return self.width - self.active_in_last

    @property
    def utilization(self) -> float:
        """Fraction of units busy over all tiles along this dimension: ``dim / (tiles*width)``."""
        return self.dim / (self.tiles * self.width)


@dataclass(frozen=True, slots=True)
class GemmTiling:
    """``out[m x n] = in[m x k] @ w[k x n]`` cut into ``tm x tn x tk`` tiles."""

    m: int
    n: int
    k: int
    tm: int
    tn: int
    tk: int

    @property
    def output_tiles(self) -> int:
        """Output tiles: ``ceil(m/tm) * ceil(n/tn)``."""
        return EdgeTiles(self.m, self.tm).tiles * EdgeTiles(self.n, self.tn).tiles

    @property
    def k_steps(self) -> int:
        """Reduction steps per output tile: ``ceil(k/tk)``."""
        return EdgeTiles(self.k, self.tk).tiles

    @property
    def tile_products(self) -> int:
        """Tile multiplies: output tiles x reduction steps."""
        return self.output_tiles * self.k_steps


def operand_fetches(order: Sequence[str], bounds: Mapping[str, int],
                    operand_dims: Sequence[str], buffer_words: int) -> int:
    """Words of one operand fetched by a loop nest, with an LRU buffer of ``buffer_words``.

    ``order`` lists loop names outermost first; ``bounds`` gives each loop's trip count;
    the operand is indexed by the loops in ``operand_dims`` (other loops reuse it). The nest
    is walked iteration by iteration (exact, for small nests); every access that misses the
    buffer is one fetch.
    """
    buf: OrderedDict[tuple, None] = OrderedDict()
    fetches = 0
    pos = [order.index(d) for d in operand_dims]
    for it in itertools.product(*(range(bounds[name]) for name in order)):
        key = tuple(it[p] for p in pos)
        if key in buf:
            buf.move_to_end(key)
            continue
        fetches += 1
        buf[key] = None
        if len(buf) > buffer_words:
            buf.popitem(last=False)
    return fetches


def count_loop_orders(loops: Sequence[str]) -> int:
    """Distinct permutations of a loop nest (enumerated, equals ``n!`` for distinct loops)."""
    return sum(1 for _ in itertools.permutations(loops))
