"""Tests of ``tensogram.StreamingEncoder`` against spec 04 Part B (B.6).

Wire facts used (spec 01 §3, §7): the preamble's total_length is the u64
big-endian at bytes 16..24, the postamble's copy is at end-16..end-8, and a
message ends with the magic ``39277777``.  A ``finish()``ed message is the
streaming form (both lengths 0); ``finish_backfilled()`` fills both in.
"""

from __future__ import annotations

import struct
import sys

import numpy as np
import pytest

import tensogram

END_MAGIC = b"39277777"


def desc(shape, dtype="float32", **extra):
    """Descriptor dict of spec 04 B.3 with the three required keys."""
    return {"type": "ntensor", "shape": list(shape), "dtype": dtype, **extra}


def preamble_length(msg: bytes) -> int:
    return struct.unpack(">Q", msg[16:24])[0]


def postamble_length(msg: bytes) -> int:
    return struct.unpack(">Q", msg[-16:-8])[0]


META = {"base": [{"name": "t", "mars": {"param": "2t"}}, {"name": "u"}],
        "_extra_": {"source": "stream-test"}}


def objects():
    """Two objects with different pipelines (spec 04 B.3)."""
    grid = np.linspace(-5.0, 5.0, 60).reshape(6, 10)
    return [
        (desc([6, 10], "float64", compression="zstd", zstd_level=3), grid),
        (desc([5], "int16", filter="shuffle", compression="lz4", shuffle_element_size=2),
         np.array([1, -1, 300, -300, 7], dtype=np.int16)),
    ]


def stream(meta=META, pairs=None, finish="finish_backfilled", **kwargs):
    enc = tensogram.StreamingEncoder(meta, **kwargs)
    for d, data in (objects() if pairs is None else pairs):
        enc.write_object(d, data)
    return getattr(enc, finish)()


def assert_same_decode(a, b):
    """Two decoded messages carry identical metadata sections and objects."""
    meta_a, objs_a = a
    meta_b, objs_b = b
    assert meta_a.base == meta_b.base
    assert meta_a.extra == meta_b.extra
    assert meta_a.num_objects == meta_b.num_objects
    assert len(objs_a) == len(objs_b)
    for (da, xa), (db, xb) in zip(objs_a, objs_b):
        assert (da.obj_type, da.ndim, da.shape, da.strides, da.dtype, da.byte_order) == (
            db.obj_type, db.ndim, db.shape, db.strides, db.dtype, db.byte_order)
        assert (da.encoding, da.filter, da.compression, da.params) == (
            db.encoding, db.filter, db.compression, db.params)
        assert xa.dtype == xb.dtype
        assert xa.shape == xb.shape
        np.testing.assert_array_equal(xa, xb)


# --------------------------------------------------------------------------
# write_object / write_object_pre_encoded


@pytest.mark.parametrize("finish", ["finish", "finish_backfilled"])
def test_streamed_message_equals_buffered_encode(finish):
    msg = stream(finish=finish)
    assert isinstance(msg, bytes)
    assert_same_decode(tensogram.decode(msg, verify_hash=True),
                       tensogram.decode(tensogram.encode(META, objects())))


def test_write_object_numpy_values_and_descriptors():
    meta, objs = tensogram.decode(stream())
    assert meta.base[0]["name"] == "t"
    assert meta.base[0]["mars"] == {"param": "2t"}
    assert meta.base[1]["name"] == "u"
    assert meta.extra == {"source": "stream-test"}
    for (d, arr), (d_in, arr_in) in zip(objs, objects()):
        assert d.shape == d_in["shape"]
        assert d.dtype == d_in["dtype"]
        assert d.compression == d_in["compression"]
        assert arr.dtype == arr_in.dtype
        np.testing.assert_array_equal(arr, arr_in)
    assert objs[0][0].params["zstd_level"] == 3


def test_write_object_bytes_payload():
    values = np.array([1.5, -2.25, 3.0], dtype=np.float32)
    enc = tensogram.StreamingEncoder({})
    enc.write_object(desc([3]), values.tobytes())
    enc.write_object(desc([3]), bytearray(values.tobytes()))
    enc.write_object(desc([3]), memoryview(values.tobytes()))
    _meta, objs = tensogram.decode(enc.finish())
    assert len(objs) == 3
    for _d, arr in objs:
        assert arr.dtype == np.float32
        np.testing.assert_array_equal(arr, values)


def test_write_object_big_endian_bytes():
    # byte_order "big" with raw bytes: the decoder returns native values (B.4).
    values = np.array([1.0, 2.0, 4.0], dtype=">f8")
    enc = tensogram.StreamingEncoder({})
    enc.write_object(desc([3], "float64", byte_order="big"), values.tobytes())
    (d, arr), = tensogram.decode(enc.finish_backfilled()).objects
    assert d.byte_order == "big"
    np.testing.assert_array_equal(arr, [1.0, 2.0, 4.0])


def test_write_object_wrong_payload_length_is_value_error():
    enc = tensogram.StreamingEncoder({})
    with pytest.raises(ValueError):
        enc.write_object(desc([4]), b"\x00" * 15)


def test_write_object_bad_descriptor_is_value_error():
    enc = tensogram.StreamingEncoder({})
    with pytest.raises(ValueError, match="unknown dtype"):
        enc.write_object(desc([2], "float99"), b"\x00" * 8)


def test_write_object_pre_encoded_verbatim():
    payload = bytes(range(32))
    enc = tensogram.StreamingEncoder({"base": [{"name": "raw"}]})
    enc.write_object_pre_encoded(desc([32], "uint8"), payload)
    enc.write_object_pre_encoded(desc([4], "float64"), np.arange(4.0).tobytes())
    msg = enc.finish()
    assert payload in msg
    meta, objs = tensogram.decode(msg)
    assert meta.base[0]["name"] == "raw"
    assert objs[0][1].tobytes() == payload
    np.testing.assert_array_equal(objs[1][1], np.arange(4.0))


def test_write_object_pre_encoded_payload_types():
    # spec 08 §1.5: PyO3's byte-vector conversion errors, as TypeError
    enc = tensogram.StreamingEncoder({})
    enc.write_object_pre_encoded(desc([4], "uint8"), np.arange(4, dtype=np.uint8))
    with pytest.raises(TypeError, match=r"^'numpy\.float32' object cannot be interpreted as an integer$"):
        enc.write_object_pre_encoded(desc([4], "uint8"), np.arange(4, dtype=np.float32))
    with pytest.raises(TypeError, match=r"^Can't extract `str` to `Vec`$"):
        enc.write_object_pre_encoded(desc([4], "uint8"), "abcd")
    with pytest.raises(TypeError, match=r"^'int' object is not an instance of 'Sequence'$"):
        enc.write_object_pre_encoded(desc([4], "uint8"), 4)


def test_pre_encoded_streamed_equals_encode_pre_encoded():
    payload = np.arange(10, dtype=np.int32).tobytes()
    enc = tensogram.StreamingEncoder({"k": 1})
    enc.write_object_pre_encoded(desc([10], "int32"), payload)
    assert_same_decode(
        tensogram.decode(enc.finish()),
        tensogram.decode(tensogram.encode_pre_encoded({"k": 1}, [(desc([10], "int32"), payload)])))


# --------------------------------------------------------------------------
# finish variants and length fields


def test_finish_leaves_total_length_zero():
    msg = stream(finish="finish")
    assert msg[:8] == b"TENSOGRM"
    assert msg[-8:] == END_MAGIC
    assert preamble_length(msg) == 0
    assert postamble_length(msg) == 0
    # Still a complete, decodable message; scan finds it by its end magic.
    assert tensogram.decode(msg).metadata.num_objects == 2
    assert tensogram.scan(msg) == [(0, len(msg))]


def test_finish_backfilled_fills_both_lengths():
    msg = stream(finish="finish_backfilled")
    assert msg[:8] == b"TENSOGRM"
    assert msg[-8:] == END_MAGIC
    assert preamble_length(msg) == len(msg)
    assert postamble_length(msg) == len(msg)
    report = tensogram.validate(msg)
    assert [i for i in report["issues"] if i["severity"] == "error"] == []


def test_finish_and_backfilled_only_differ_in_length_fields():
    # Same input → the two forms have the same size and decode alike.
    plain = stream(finish="finish")
    filled = stream(finish="finish_backfilled")
    assert len(plain) == len(filled)
    assert_same_decode(tensogram.decode(plain), tensogram.decode(filled))


@pytest.mark.parametrize("method,backfilled", [("finish_and_reset", False),
                                               ("finish_and_reset_backfilled", True)])
def test_finish_and_reset_starts_next_message_with_same_metadata(method, backfilled):
    enc = tensogram.StreamingEncoder(META)
    first_objects = objects()
    for d, data in first_objects:
        enc.write_object(d, data)
    first = getattr(enc, method)()

    second_data = [np.full((6, 10), 42.0), np.array([9, 8, 7, 6, 5], dtype=np.int16)]
    for (d, _), data in zip(first_objects, second_data):
        enc.write_object(d, data)
    second = getattr(enc, method)()

    third_data = [np.zeros((6, 10)), np.zeros(5, dtype=np.int16)]
    for (d, _), data in zip(first_objects, third_data):
        enc.write_object(d, data)
    third = enc.finish_backfilled()

    for msg in (first, second):
        expected = len(msg) if backfilled else 0
        assert preamble_length(msg) == expected
        assert postamble_length(msg) == expected
    m1, o1 = tensogram.decode(first)
    m2, o2 = tensogram.decode(second)
    m3, o3 = tensogram.decode(third)
    # Same caller metadata in every message (spec 04 B.6).
    assert m1.base == m2.base
    assert m1.extra == m2.extra == m3.extra == {"source": "stream-test"}
    assert m3.base[0]["name"] == "t"
    # Objects belong to their own message only.
    assert len(o1) == len(o2) == len(o3) == 2
    np.testing.assert_array_equal(o1[0][1], first_objects[0][1])
    np.testing.assert_array_equal(o2[0][1], second_data[0])
    np.testing.assert_array_equal(o2[1][1], second_data[1])
    np.testing.assert_array_equal(o3[0][1], third_data[0])
    # Two distinct encodes: provenance uuid differs.
    assert m1.reserved["uuid"] != m2.reserved["uuid"]


FINISHED_CALLS = [
    ("write_object", lambda e: e.write_object(desc([1]), np.zeros(1, np.float32))),
    ("write_object_pre_encoded", lambda e: e.write_object_pre_encoded(desc([1]), b"\x00" * 4)),
    ("finish", lambda e: e.finish()),
    ("finish_backfilled", lambda e: e.finish_backfilled()),
    ("finish_and_reset", lambda e: e.finish_and_reset()),
    ("finish_and_reset_backfilled", lambda e: e.finish_and_reset_backfilled()),
]


@pytest.mark.parametrize("finisher", ["finish", "finish_backfilled"])
@pytest.mark.parametrize("name,call", FINISHED_CALLS, ids=[n for n, _ in FINISHED_CALLS])
def test_calls_after_finish_raise_runtime_error(finisher, name, call):
    enc = tensogram.StreamingEncoder({})
    enc.write_object(desc([2]), np.zeros(2, np.float32))
    getattr(enc, finisher)()
    with pytest.raises(RuntimeError, match="^StreamingEncoder already finished$"):
        call(enc)


def test_finish_and_reset_does_not_finish():
    enc = tensogram.StreamingEncoder({})
    enc.write_object(desc([2]), np.zeros(2, np.float32))
    enc.finish_and_reset()
    enc.write_object(desc([2]), np.ones(2, np.float32))  # must not raise
    msg = enc.finish()
    np.testing.assert_array_equal(tensogram.decode(msg).objects[0][1], np.ones(2, np.float32))


# --------------------------------------------------------------------------
# hashing options


def test_hash_none_gives_missing_hash_on_verify():
    msg = stream(hash=None)
    tensogram.decode(msg)  # fine without verification
    with pytest.raises(tensogram.MissingHashError) as info:
        tensogram.decode(msg, verify_hash=True)
    assert info.value.object_index == 0
    assert tensogram.validate(msg)["hash_verified"] is False


def test_default_hash_verifies():
    msg = stream(finish="finish")
    tensogram.decode(msg, verify_hash=True)
    assert tensogram.validate(stream())["hash_verified"] is True


def test_bad_hash_name_is_value_error():
    with pytest.raises(ValueError):
        tensogram.StreamingEncoder({}, hash="md5")


def test_reserved_metadata_rejected():
    # spec 04 B.2: "_reserved_" at top level → ValueError (also for streaming).
    with pytest.raises(ValueError):
        enc = tensogram.StreamingEncoder({"_reserved_": {"x": 1}})
        enc.write_object(desc([1]), np.zeros(1, np.float32))
        enc.finish()


# --------------------------------------------------------------------------
# streamed messages in a file


def test_concatenated_streamed_messages_read_by_tensogram_file(tmp_path):
    enc = tensogram.StreamingEncoder({"base": [{"name": "series"}]})
    messages = []
    values = []
    for i in range(4):
        arr = np.arange(i, i + 8, dtype=np.float32)
        values.append(arr)
        enc.write_object(desc([8]), arr)
        # Alternate streaming form (length 0) and back-filled form.
        messages.append(enc.finish_and_reset() if i % 2 == 0 else enc.finish_and_reset_backfilled())
    arr = np.full(8, -1.0, dtype=np.float32)
    values.append(arr)
    enc.write_object(desc([8]), arr)
    messages.append(enc.finish())

    path = tmp_path / "streamed.tgm"
    path.write_bytes(b"".join(messages))

    with tensogram.TensogramFile.open(str(path)) as f:
        assert len(f) == len(messages)
        assert f.messages() == messages
        for i, (meta, objs) in enumerate(f):
            assert meta.base[0]["name"] == "series"
            np.testing.assert_array_equal(objs[0][1], values[i])
    offsets = [0]
    for m in messages[:-1]:
        offsets.append(offsets[-1] + len(m))
    assert tensogram.scan(path.read_bytes()) == [(o, len(m)) for o, m in zip(offsets, messages)]


def test_streaming_base_longer_than_objects_is_error():
    # spec 04 B.2: more base entries than objects is an encode-time error
    # (the reference streaming encoder truncates; spec 01 §18 says a
    # conforming encoder SHOULD error instead).
    enc = tensogram.StreamingEncoder({"base": [{"a": 1}, {"b": 2}, {"c": 3}]})
    enc.write_object(desc([1]), np.zeros(1, np.float32))
    with pytest.raises(ValueError):
        enc.finish_backfilled()


def test_streaming_base_shorter_than_objects_is_padded():
    # spec 02 §3.3 step 3: base padded with empty maps (plus _reserved_).
    enc = tensogram.StreamingEncoder({"base": [{"a": 1}]})
    enc.write_object(desc([1]), np.zeros(1, np.float32))
    enc.write_object(desc([2]), np.zeros(2, np.float32))
    meta = tensogram.decode(enc.finish_backfilled()).metadata
    assert meta.num_objects == 2
    assert meta.base[0]["a"] == 1
    assert set(meta.base[1]) == {"_reserved_"}


def test_native_byte_order_default():
    enc = tensogram.StreamingEncoder({})
    enc.write_object(desc([2]), np.ones(2, np.float32))
    (d, _arr), = tensogram.decode(enc.finish()).objects
    assert d.byte_order == sys.byteorder
