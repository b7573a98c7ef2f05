"""numba kernels of the systolic model (the hot loops). Pure: arrays in, arrays out."""

from __future__ import annotations

import numba
import numpy as np

# operand tile dependency: 0 = on the row fold i, 1 = on the column fold j, 2 = on (i, j)
_DEP_I, _DEP_J, _DEP_IJ = 0, 1, 2


@numba.njit(cache=True)
def _tile_words(dep: int, i: int, j: int, sr: int, sc: int, t: int, rows: int, cols: int) -> float:
    used_r = min(rows, sr - i * rows)
    used_c = min(cols, sc - j * cols)
    if dep == _DEP_I:
        return used_r * t
    if dep == _DEP_J:
        return t * used_c
    return used_r * used_c


@numba.njit(cache=True)
def _operand_stream(dep, sr, sc, t, rows, cols, fr, fc, nbytes, cap, sr_outer, out):
    total = 0.0
    if dep == _DEP_I:
        total = sr * t * nbytes
    elif dep == _DEP_J:
        total = t * sc * nbytes
    else:
        total = sr * sc * nbytes
    nid = fr if dep == _DEP_I else (fc if dep == _DEP_J else fr * fc)
    seen = np.zeros(nid, dtype=np.bool_)
    prev = -1
    f = 0
    for a in range(fr if sr_outer else fc):
        for b in range(fc if sr_outer else fr):
            i = a if sr_outer else b
            j = b if sr_outer else a
            tid = i if dep == _DEP_I else (j if dep == _DEP_J else i * fc + j)
            tile = _tile_words(dep, i, j, sr, sc, t, rows, cols) * nbytes
            fetch = False
            if total <= cap:
                fetch = not seen[tid]
            elif tile <= cap / 2:
                fetch = tid != prev
            else:
                fetch = True
            out[f] = tile if fetch else 0.0
            seen[tid] = True
            prev = tid
            f += 1


@numba.njit(cache=True)
def fold_traffic(dataflow, sr, sc, t, rows, cols, word_bytes, out_bytes, psum_bytes,
                 cap_ifmap, cap_filter, cap_ofmap, sr_outer, ifmap_factor):
    """Per-fold DRAM bytes: (ifmap, filter, psum read, ofmap write, psum write) arrays."""
    fr = (sr + rows - 1) // rows
    fc = (sc + cols - 1) // cols
    nf = fr * fc
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
    _operand_stream(dep_in, sr, sc, t, rows, cols, fr, fc, word_bytes * ifmap_factor,
                    cap_ifmap, sr_outer, ifm)
    _operand_stream(dep_w, sr, sc, t, rows, cols, fr, fc, word_bytes, cap_filter, sr_outer, flt)
    if dataflow == 0:
        f = 0
        for a in range(fr if sr_outer else fc):
            for b in range(fc if sr_outer else fr):
                i = a if sr_outer else b
                j = b if sr_outer else a
                ofw[f] = _tile_words(_DEP_IJ, i, j, sr, sc, t, rows, cols) * out_bytes
                f += 1
        return ifm, flt, psr, ofw, psw
    # ws / is: output tile depends on j, accumulated over the row folds i
    total_acc = t * sc * psum_bytes
    f = 0
    for a in range(fr if sr_outer else fc):
        for b in range(fc if sr_outer else fr):
            i = a if sr_outer else b
            j = b if sr_outer else a
            words = _tile_words(_DEP_J, i, j, sr, sc, t, rows, cols)
            if sr_outer:
                resident = total_acc <= cap_ofmap or fc == 1 and words * psum_bytes <= cap_ofmap / 2
            else:
                resident = words * psum_bytes <= cap_ofmap / 2 or total_acc <= cap_ofmap
            if i == fr - 1:
                ofw[f] = words * out_bytes
            elif not resident:
                psw[f] = words * psum_bytes
            if i > 0 and not resident:
                psr[f] = words * psum_bytes
            f += 1
    return ifm, flt, psr, ofw, psw
