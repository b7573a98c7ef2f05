"""Floating-point formats from their bit layout (sign, exponent, mantissa): the IEEE 754
binary32/binary16 values, bfloat16 with fp32's range, TF32 stored in a 32-bit word, and the
two OCP FP8 formats (E4M3 without infinities, max 448; E5M2 IEEE-like, max 57344)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from accelsim.errors import WorkloadError
from accelsim.workload.dtypes import FORMATS, FloatFormat, float_format


def test_fp16_matches_ieee_binary16_and_numpy():
    f = float_format("fp16")
    info = np.finfo(np.float16)
    assert (f.exp_bits, f.mant_bits, f.bits, f.bytes) == (5, 10, 16, 2)
    assert f.min_normal == float(info.tiny) == 2.0 ** -14
    assert f.max_finite == float(info.max) == 65504
    assert f.epsilon == float(info.eps)
    assert f.min_subnormal == 2.0 ** -24


def test_fp32_matches_numpy():
    f = float_format("fp32")
    info = np.finfo(np.float32)
    assert f.min_normal == float(info.tiny) and f.max_finite == float(info.max)
    assert f.epsilon == float(info.eps) and f.bytes == 4


def test_bf16_is_fp32_with_the_low_16_mantissa_bits_cut():
    bf16, fp32 = float_format("bf16"), float_format("fp32")
    assert (bf16.exp_bits, bf16.mant_bits, bf16.bytes) == (8, 7, 2)
    assert bf16.min_normal == fp32.min_normal
    # the largest bf16 is the fp32 word 0x7F7F0000
    assert bf16.max_finite == struct.unpack(">f", bytes.fromhex("7f7f0000"))[0]


def test_tf32_has_fp32_range_fp16_precision_and_fp32_storage():
    tf32 = float_format("tf32")
    assert tf32.bits == 19 and tf32.storage_bits == 32 and tf32.bytes == 4
    assert tf32.min_normal == float_format("fp32").min_normal
    assert tf32.epsilon == float_format("fp16").epsilon


def test_ocp_fp8_formats():
    e4m3, e5m2 = float_format("fp8_e4m3"), float_format("fp8_e5m2")
    assert e4m3.max_finite == 448 and not e4m3.has_infinity
    assert e4m3.min_normal == 2.0 ** -6 and e4m3.min_subnormal == 2.0 ** -9
    assert e5m2.max_finite == 57344 and e5m2.has_infinity
    assert e5m2.min_normal == 2.0 ** -14 and e5m2.min_subnormal == 2.0 ** -16
    # E4M3 under IEEE rules would top out at 240: the OCP encoding gains one binade
    ieee = FloatFormat(name="e4m3_ieee", exp_bits=4, mant_bits=3)
    assert ieee.max_finite == 240
    assert float_format("fp8") is e4m3
    assert e4m3.bytes == e5m2.bytes == 1


def test_every_format_orders_its_range():
    for f in FORMATS.values():
        assert f.min_subnormal < f.min_normal < 1 < f.max_finite
        assert f.bytes * 8 >= f.bits


def test_bad_formats_are_refused():
    with pytest.raises(WorkloadError, match="int8"):
        float_format("int8")
    with pytest.raises(ValueError):
        FloatFormat(name="x", exp_bits=8, mant_bits=23, container_bits=16)
