"""Zero-copy decode (issue: decoded arrays view the library's buffer, kept
alive by the array)."""

import gc

import numpy as np
import pytest

import tensogram

DESC = {"type": "ntensor", "shape": [100, 10], "dtype": "float64"}


def values():
    return np.linspace(250.0, 310.0, 1000).reshape(100, 10)


def test_uncompressed_native_object_is_a_view_of_the_message_bytes():
    msg = tensogram.encode({}, [(DESC, values())])
    arr = tensogram.decode(msg).objects[0][1]
    assert arr.base is msg  # the message buffer itself keeps the memory alive
    assert np.shares_memory(arr, np.frombuffer(msg, dtype=np.uint8))
    assert not arr.flags.writeable  # writing would change the caller's message
    np.testing.assert_array_equal(arr, values())
    with pytest.raises(ValueError):
        arr[0, 0] = 1.0
    writable = arr.copy()
    writable[0, 0] = 1.0  # the documented way to get a writable array


def test_the_view_outlives_every_other_reference():
    msg = tensogram.encode({}, [(DESC, values())])
    arr = tensogram.decode(msg).objects[0][1]
    del msg
    gc.collect()
    np.testing.assert_array_equal(arr, values())


def test_bytearray_input_is_pinned_while_viewed():
    buf = bytearray(tensogram.encode({}, [(DESC, values())]))
    arr = tensogram.decode(buf).objects[0][1]
    assert isinstance(arr.base, memoryview) and arr.base.obj is buf
    with pytest.raises(BufferError):
        buf.extend(b"x" * 1000)  # a resize would move the memory under the array
    del arr
    gc.collect()
    buf.extend(b"x")  # released with the array


def test_decode_object_views_too():
    msg = tensogram.encode({}, [(DESC, values()), (DESC, values() + 1)])
    _, _, arr = tensogram.decode_object(msg, 1)
    assert arr.base is msg
    np.testing.assert_array_equal(arr, values() + 1)


def test_decoded_results_wrap_the_library_buffer_without_copying():
    msg = tensogram.encode({}, [({**DESC, "compression": "zstd"}, values())])
    arr = tensogram.decode(msg).objects[0][1]
    # Not numpy-owned memory: a capsule holding the library's result buffer.
    assert not arr.flags.owndata
    assert type(arr.base).__name__ == "PyCapsule"
    assert arr.flags.writeable and arr.flags.c_contiguous and arr.flags.aligned
    arr[0, 0] = -1.0  # owned by the array alone
    assert tensogram.decode(msg).objects[0][1][0, 0] == values()[0, 0]


def test_byte_swapped_objects_are_decoded_not_viewed():
    msg = tensogram.encode({}, [({**DESC, "byte_order": "big"}, values().astype(">f8").tobytes())])
    arr = tensogram.decode(msg).objects[0][1]
    assert arr.base is not msg and arr.flags.writeable and arr.dtype.isnative
    # ...unless the wire order is asked for: then it is a view again.
    wire = tensogram.decode(msg, native_byte_order=False).objects[0][1]
    assert wire.base is msg and wire.dtype == np.dtype("f8")   # native dtype (spec 08 §5)
    np.testing.assert_array_equal(wire.view(">f8"), values())


def test_file_reads_give_writable_arrays(tmp_path):
    path = tmp_path / "f.tgm"
    with tensogram.TensogramFile.create(path) as f:
        f.append({}, [(DESC, values())])
    with tensogram.TensogramFile.open(path) as f:
        arr = f.file_decode_object(0, 0)["data"]
    assert arr.flags.writeable
    np.testing.assert_array_equal(arr, values())
