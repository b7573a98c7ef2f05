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
def _fold_ij(f, fr, fc, sr_outer, block):
    """(i, j) of fold ``f`` in the order of :func:`fold_order` (every block but the last is
    full, so the block is ``f // (block x other fold count)``)."""
    if sr_outer:
        ib = f // (block * fc)
        bs = min(block, fr - ib * block)
        o = f - ib * block * fc
        return ib * block + o % bs, o // bs
    jb = f // (block * fr)
    bs = min(block, fc - jb * block)
    o = f - jb * block * fr
    return o // bs, jb * block + o % bs


@numba.njit(cache=True)
def _compulsory(dataflow, sr, sc, t, rows, cols, word_bytes, psum_bytes, cap_ifmap,
                cap_filter, cap_ofmap, sr_outer, block, ifmap_factor):
    """Whether fold order ``(sr_outer, block)`` moves only compulsory DRAM traffic (every
    operand tile loaded once, no partial sum spilled): :func:`fold_traffic`'s buffers replayed
    fold by fold, stopping at the first tile loaded a second time or the first spill."""
    fr = (sr + rows - 1) // rows
    fc = (sc + cols - 1) // cols
    if dataflow == 0:
        deps = (_DEP_I, _DEP_J)
    elif dataflow == 1:
        deps = (_DEP_I, _DEP_IJ)
    else:
        deps = (_DEP_IJ, _DEP_I)
    # the LRU state of each reusable operand buffer (dependency I or J) that can evict
    nids = np.zeros(3, np.int64)
    slots = np.zeros(3, np.int64)
    for s in range(2):
        dep = deps[s]
        nbytes = word_bytes * ifmap_factor if s == 0 else word_bytes
        cap = cap_ifmap if s == 0 else cap_filter
        if dep == _DEP_I:
            nids[s] = fr
            slots[s] = _slots(sr * t * nbytes, min(rows, sr) * t * nbytes, cap)
        elif dep == _DEP_J:
            nids[s] = fc
            slots[s] = _slots(t * sc * nbytes, t * min(cols, sc) * nbytes, cap)
    if dataflow != 0:
        nids[2] = fc
        slots[2] = _slots(t * sc * psum_bytes, t * min(cols, sc) * psum_bytes, cap_ofmap)
    size = max(nids[0], max(nids[1], nids[2])) + 1
    prev = np.full((3, size), -1, np.int64)
    nxt = np.full((3, size), -1, np.int64)
    seen = np.zeros((3, size), np.bool_)
    live = np.zeros(3, np.bool_)
    resident = np.zeros(3, np.int64)
    for s in range(3):
        live[s] = nids[s] > 0 and slots[s] < nids[s]   # a buffer that may have to evict
        prev[s, nids[s]] = nids[s]
        nxt[s, nids[s]] = nids[s]
    done = np.zeros(fc, np.int64)
    for f in range(fr * fc):
        i, j = _fold_ij(f, fr, fc, sr_outer, block)
        for s in range(3):
            if not live[s]:
                continue
            tid = j if s == 2 or deps[s] == _DEP_J else i
            head = nids[s]
            if prev[s, tid] >= 0:
                _lru_unlink(prev[s], nxt[s], tid)
            else:
                if seen[s, tid] and s < 2:
                    return False                        # an input tile loaded again
                seen[s, tid] = True
                if resident[s] >= slots[s]:
                    victim = prev[s, head]
                    _lru_unlink(prev[s], nxt[s], victim)
                    resident[s] -= 1
                    if s == 2 and done[victim] < fr:
                        return False                    # an unfinished partial sum spilled
                resident[s] += 1
            _lru_push_front(prev[s], nxt[s], tid, head)
        done[j] += 1
    return True


@numba.njit(cache=True)
def _exact_sums(dataflow, sr, sc, t, rows, cols, word_bytes, out_bytes, psum_bytes,
                ifmap_factor):
    """Whether every per-fold byte count is a positive multiple of 1/1024 and the largest
    possible total stays below 2**43: then every sum :func:`best_order` compares is exact,
    whatever the order of its terms, and every extra load or spill adds bytes."""
    if t < 1:
        return False
    for x in (word_bytes, word_bytes * ifmap_factor, out_bytes, psum_bytes):
        if not x > 0.0 or x * 1024.0 != np.floor(x * 1024.0):
            return False
    fr = (sr + rows - 1) // rows
    fc = (sc + cols - 1) // cols
    most = max(word_bytes * max(ifmap_factor, 1.0), max(out_bytes, psum_bytes))
    per_fold = float(rows * t + t * cols + rows * cols + 2 * t * cols)
    return float(fr * fc) * per_fold * most * 4.0 < 2.0 ** 43


@numba.njit(cache=True)
def _max_slots(dataflow, sr, sc, t, rows, cols, word_bytes, psum_bytes, cap_ifmap, cap_filter,
               cap_ofmap, ifmap_factor):
    """The largest slot count of the buffers the fold order matters to (blocks beyond it only
    thrash more), or 0 when every operand stays on chip whole (the order does not matter)."""
    # buffer slot counts: blocks larger than every buffer's slot count only thrash more
    ur = min(rows, sr)
    uc = min(cols, sc)
    if dataflow == 0:
        s_in = _slots(sr * t * word_bytes * ifmap_factor, ur * t * word_bytes * ifmap_factor,
                      cap_ifmap)
        s_w = _slots(t * sc * word_bytes, t * uc * word_bytes, cap_filter)
        s_out = 1
    elif dataflow == 1:
        s_in = _slots(sr * t * word_bytes * ifmap_factor, ur * t * word_bytes * ifmap_factor,
                      cap_ifmap)
        s_w = 1
        s_out = _slots(t * sc * psum_bytes, t * uc * psum_bytes, cap_ofmap)
    else:
        s_in = 1
        s_w = _slots(sr * t * word_bytes, ur * t * word_bytes, cap_filter)
        s_out = _slots(t * sc * psum_bytes, t * uc * psum_bytes, cap_ofmap)
    big = 1 << 40
    if (s_in == big or s_in == 1 and dataflow == 2) and (s_w == big or s_w == 1 and dataflow == 1) \
            and (s_out == big or dataflow == 0):
        return 0
    return max(s_in, max(s_w, s_out))


@numba.njit(cache=True)
def _best_order_search(dataflow, sr, sc, t, rows, cols, word_bytes, out_bytes, psum_bytes,
                       cap_ifmap, cap_filter, cap_ofmap, ifmap_factor):
    """(sr_outer, block) moving the fewest DRAM bytes; ties keep the earlier candidate.

    Candidates: both orders with blocks 1, 2, 4, ... up to the fold count of the blocked
    dimension or the largest buffer slot count (row-major block 1 first; SCALE-Sim itself
    runs column folds outer, ``sr_outer=False`` block 1).

    Every candidate's traffic is computed in full; :func:`best_order` gives the same answer
    faster where it can (this is the reference a test holds it equal to).
    """
    fr = (sr + rows - 1) // rows
    fc = (sc + cols - 1) // cols
    max_slots = _max_slots(dataflow, sr, sc, t, rows, cols, word_bytes, psum_bytes, cap_ifmap,
                           cap_filter, cap_ofmap, ifmap_factor)
    if max_slots == 0:
        return True, 1     # every operand stays on chip whole: the order does not matter
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


@numba.njit(cache=True)
def best_order(dataflow, sr, sc, t, rows, cols, word_bytes, out_bytes, psum_bytes,
               cap_ifmap, cap_filter, cap_ofmap, ifmap_factor):
    """(sr_outer, block) moving the fewest DRAM bytes; ties keep the earlier candidate: the
    answer of :func:`_best_order_search`.

    Compulsory traffic (each operand tile loaded once, outputs written once, no partial sum
    spilled) is a lower bound on every candidate's, and any other traffic adds bytes. So when
    the sums are exact (:func:`_exact_sums`), the first candidate that moves only compulsory
    traffic is the answer: every earlier one moves strictly more, no later one less. Finding
    it stops each candidate's replay at its first extra load or spill (:func:`_compulsory`);
    where no candidate is compulsory, or sums may round, every candidate is priced in full.
    """
    fr = (sr + rows - 1) // rows
    fc = (sc + cols - 1) // cols
    if _exact_sums(dataflow, sr, sc, t, rows, cols, word_bytes, out_bytes, psum_bytes,
                   ifmap_factor):
        max_slots = _max_slots(dataflow, sr, sc, t, rows, cols, word_bytes, psum_bytes,
                               cap_ifmap, cap_filter, cap_ofmap, ifmap_factor)
        if max_slots == 0:
            return True, 1
        for order in range(2):
            sr_outer = order == 0
            limit = min(fr if sr_outer else fc, max_slots)
            b = 1
            while True:
                if _compulsory(dataflow, sr, sc, t, rows, cols, word_bytes, psum_bytes,
                               cap_ifmap, cap_filter, cap_ofmap, sr_outer, b, ifmap_factor):
                    return sr_outer, b
                if b >= limit:
                    break
                b = min(b * 2, limit)
    return _best_order_search(dataflow, sr, sc, t, rows, cols, word_bytes, out_bytes,
                              psum_bytes, cap_ifmap, cap_filter, cap_ofmap, ifmap_factor)
