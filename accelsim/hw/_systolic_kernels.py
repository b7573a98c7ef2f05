"""numba kernels of the systolic model (the hot loops). Pure: arrays in, arrays out.

Fold order: ``sr_outer`` with block ``b`` runs ``for ib in row blocks of b: for j: for i in
ib`` (``b = 1`` is the plain row-major order); ``sc_outer`` runs ``for jb in column blocks of
b: for i: for j in jb``. Each operand buffer holds its tiles with least-recently-used
replacement in the half of the buffer that is not being prefetched into (the whole buffer when
the whole operand fits).
"""

from __future__ import annotations

import numba
import numpy as np

# operand tile dependency: 0 = on the row fold i, 1 = on the column fold j, 2 = on (i, j)
_DEP_I, _DEP_J, _DEP_IJ = 0, 1, 2


@numba.njit(cache=True)
def _used(i, j, sr, sc, rows, cols):
    return min(rows, sr - i * rows), min(cols, sc - j * cols)


@numba.njit(cache=True)
def _tile_words(dep, i, j, sr, sc, t, rows, cols):
    used_r, used_c = _used(i, j, sr, sc, rows, cols)
    if dep == _DEP_I:
        return used_r * t
    if dep == _DEP_J:
        return t * used_c
    return used_r * used_c


@numba.njit(cache=True)
def fold_order(fr, fc, sr_outer, block):
    """(i, j) of every fold in execution order."""
    nf = fr * fc
    oi = np.empty(nf, np.int64)
    oj = np.empty(nf, np.int64)
    f = 0
    if sr_outer:
        for ib in range(0, fr, block):
            for j in range(fc):
                for i in range(ib, min(ib + block, fr)):
                    oi[f] = i
                    oj[f] = j
                    f += 1
    else:
        for jb in range(0, fc, block):
            for i in range(fr):
                for j in range(jb, min(jb + block, fc)):
                    oi[f] = i
                    oj[f] = j
                    f += 1
    return oi, oj


@numba.njit(cache=True)
def _slots(total, tile, cap):
    """Tiles an LRU buffer of ``cap`` bytes keeps (all of them when the operand fits)."""
    if total <= cap:
        return 1 << 40
    if tile <= 0:
        return 1 << 40
    return max(1, int((cap / 2) // tile))


@numba.njit(cache=True)
def _lru_new(n):
    """An LRU list over ids 0..n-1 (doubly linked; slot n is the head/tail sentinel)."""
    prev = np.full(n + 1, -1, np.int64)
    nxt = np.full(n + 1, -1, np.int64)
    prev[n] = n
    nxt[n] = n
    return prev, nxt


@numba.njit(cache=True)
def _lru_unlink(prev, nxt, k):
    nxt[prev[k]] = nxt[k]
    prev[nxt[k]] = prev[k]
    prev[k] = -1
    nxt[k] = -1


@numba.njit(cache=True)
def _lru_push_front(prev, nxt, k, head):
    first = nxt[head]
    nxt[head] = k
    prev[k] = head
    nxt[k] = first
    prev[first] = k


@numba.njit(cache=True)
def _input_stream(dep, oi, oj, sr, sc, t, rows, cols, fr, fc, nbytes, cap, out):
    if dep == _DEP_I:
        total = sr * t * nbytes
        nid = fr
        full_tile = min(rows, sr) * t * nbytes
    elif dep == _DEP_J:
        total = t * sc * nbytes
        nid = fc
        full_tile = t * min(cols, sc) * nbytes
    else:
        total = sr * sc * nbytes
        nid = fr * fc
        full_tile = min(rows, sr) * min(cols, sc) * nbytes
    slots = _slots(total, full_tile, cap)
    prev, nxt = _lru_new(nid)
    head = nid
    resident = 0
    for f in range(oi.shape[0]):
        i = oi[f]
        j = oj[f]
        tid = i if dep == _DEP_I else (j if dep == _DEP_J else i * fc + j)
        if prev[tid] >= 0:       # resident: a hit, now the most recently used
            out[f] = 0.0
            _lru_unlink(prev, nxt, tid)
        else:
            out[f] = _tile_words(dep, i, j, sr, sc, t, rows, cols) * nbytes
            if resident >= slots:  # evict the least recently used tile
                _lru_unlink(prev, nxt, prev[head])
                resident -= 1
            resident += 1
        _lru_push_front(prev, nxt, tid, head)


@numba.njit(cache=True)
def fold_traffic(dataflow, sr, sc, t, rows, cols, word_bytes, out_bytes, psum_bytes,
                 cap_ifmap, cap_filter, cap_ofmap, sr_outer, block, ifmap_factor):
    """Per-fold DRAM bytes: (ifmap, filter, psum read, ofmap write, psum write) arrays."""
    fr = (sr + rows - 1) // rows
    fc = (sc + cols - 1) // cols
    nf = fr * fc
    oi, oj = fold_order(fr, fc, sr_outer, block)
    ifm = np.zeros(nf)
    flt = np.zeros(nf)
    psr = np.zeros(nf)
    ofw = np.zeros(nf)
    psw = np.zeros(nf)
    if dataflow == 0:      # os: ifmap on i (M rows x K), filter on j (K x N cols)
        dep_in, dep_w = _DEP_I, _DEP_J
    elif dataflow == 1:    # ws: ifmap on i (M x K-slice), filter on (i, j)
        dep_in, dep_w = _DEP_I, _DEP_IJ
    else:                  # is: ifmap on (i, j), filter on i (K-slice x N)
        dep_in, dep_w = _DEP_IJ, _DEP_I
    _input_stream(dep_in, oi, oj, sr, sc, t, rows, cols, fr, fc, word_bytes * ifmap_factor,
                  cap_ifmap, ifm)
    _input_stream(dep_w, oi, oj, sr, sc, t, rows, cols, fr, fc, word_bytes, cap_filter, flt)
    if dataflow == 0:
        for f in range(nf):
            ofw[f] = _tile_words(_DEP_IJ, oi[f], oj[f], sr, sc, t, rows, cols) * out_bytes
        return ifm, flt, psr, ofw, psw
    # ws / is: output tile j accumulates over the row folds i (partial sums)
    total = t * sc * psum_bytes
    slots = _slots(total, t * min(cols, sc) * psum_bytes, cap_ofmap)
    prev, nxt = _lru_new(fc)
    head = fc
    done = np.zeros(fc, np.int64)      # row folds accumulated so far per output tile
    spilled = np.zeros(fc, np.bool_)
    resident = 0
    for f in range(nf):
        i = oi[f]
        j = oj[f]
        words = _tile_words(_DEP_J, i, j, sr, sc, t, rows, cols)
        if prev[j] >= 0:
            _lru_unlink(prev, nxt, j)
        else:
            if spilled[j]:
                psr[f] += words * psum_bytes       # read the spilled partial sums back
                spilled[j] = False
            if resident >= slots:
                victim = prev[head]
                _lru_unlink(prev, nxt, victim)
                resident -= 1
                if done[victim] < fr:              # unfinished: spill its partial sums
                    vw = _tile_words(_DEP_J, 0, victim, sr, sc, t, rows, cols)
                    psw[f] += vw * psum_bytes
                    spilled[victim] = True
            resident += 1
        _lru_push_front(prev, nxt, j, head)
        done[j] += 1
        if done[j] == fr:
            ofw[f] += words * out_bytes            # final outputs leave after the last K fold
    return ifm, flt, psr, ofw, psw


@numba.njit(cache=True)
def best_order(dataflow, sr, sc, t, rows, cols, word_bytes, out_bytes, psum_bytes,
               cap_ifmap, cap_filter, cap_ofmap, ifmap_factor):
    """(sr_outer, block) moving the fewest DRAM bytes; ties keep the earlier candidate.

    Candidates: both orders with blocks 1, 2, 4, ... up to the fold count of the blocked
    dimension or the largest buffer slot count (row-major block 1 first; SCALE-Sim itself
    runs column folds outer, ``sr_outer=False`` block 1).
    """
    fr = (sr + rows - 1) // rows
    fc = (sc + cols - 1) // cols
    # buffer slot counts: blocks larger than every buffer's slot count only thrash more
    ur = min(rows, sr)
    uc = min(cols, sc)
    if dataflow == 0:
        s_in = _slots(sr * t * word_bytes * ifmap_factor, ur * t * word_bytes * ifmap_factor, cap_ifmap)
        s_w = _slots(t * sc * word_bytes, t * uc * word_bytes, cap_filter)
        s_out = 1
    elif dataflow == 1:
        s_in = _slots(sr * t * word_bytes * ifmap_factor, ur * t * word_bytes * ifmap_factor, cap_ifmap)
        s_w = 1
        s_out = _slots(t * sc * psum_bytes, t * uc * psum_bytes, cap_ofmap)
    else:
        s_in = 1
        s_w = _slots(sr * t * word_bytes, ur * t * word_bytes, cap_filter)
        s_out = _slots(t * sc * psum_bytes, t * uc * psum_bytes, cap_ofmap)
    big = 1 << 40
    if (s_in == big or s_in == 1 and dataflow == 2) and (s_w == big or s_w == 1 and dataflow == 1) \
            and (s_out == big or dataflow == 0):
        return True, 1     # every operand stays on chip whole: the order does not matter
    max_slots = max(s_in, max(s_w, s_out))
    best_bytes = np.inf
    best_sr = True
    best_b = 1
    for order in range(2):
        sr_outer = order == 0
        limit = min(fr if sr_outer else fc, max_slots)
        b = 1
        while True:
            a = fold_traffic(dataflow, sr, sc, t, rows, cols, word_bytes, out_bytes, psum_bytes,
                             cap_ifmap, cap_filter, cap_ofmap, sr_outer, b, ifmap_factor)
            total = a[0].sum() + a[1].sum() + a[2].sum() + a[3].sum() + a[4].sum()
            if total < best_bytes:
                best_bytes = total
                best_sr = sr_outer
                best_b = b
            if b >= limit:
                break
            b = min(b * 2, limit)
    return best_sr, best_b
