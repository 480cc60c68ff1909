"""Bad input gets the typed errors of spec 04 B.7 — never a crash, a hang or
silently wrong data."""

import numpy as np
import pytest

import tensogram

TYPED = (ValueError, OSError, tensogram.IntegrityError)


@pytest.fixture(scope="module")
def message():
    values = [
        np.linspace(250.0, 310.0, 40).reshape(5, 8),
        np.arange(12, dtype=np.int32),
        np.linspace(0.0, 1.0, 64),
    ]
    msg = tensogram.encode(
        {"base": [{"name": "t"}, {"name": "i"}, {"name": "p"}], "source": "test"},
        [
            ({"type": "ntensor", "shape": [5, 8], "dtype": "float64", "compression": "zstd"}, values[0]),
            ({"type": "ntensor", "shape": [12], "dtype": "int32"}, values[1]),
            ({"type": "ntensor", "shape": [64], "dtype": "float64", "encoding": "simple_packing",
              "sp_bits_per_value": 16, "compression": "szip", "szip_rsi": 128, "szip_block_size": 16,
              "szip_flags": 8}, values[2]),
        ],
    )  # fmt: skip
    return msg, [o[1] for o in tensogram.decode(msg).objects]


def test_every_truncation_is_a_framing_error(message):
    msg, _ = message
    for n in range(len(msg)):
        with pytest.raises(ValueError, match="^FramingError: "):
            tensogram.decode(msg[:n])


def test_every_byte_flip_is_caught_or_harmless(message):
    """With verify_hash each flipped byte either raises a typed error or
    decodes to exactly the original arrays (bytes no decoder reads: padding,
    provenance text, the unused first_footer_offset)."""
    msg, original = message
    harmless = 0
    for pos in range(len(msg)):
        bad = bytearray(msg)
        bad[pos] ^= 0x5A
        try:
            _, objects = tensogram.decode(bytes(bad), verify_hash=True)
        except TYPED:
            continue
        for (_, got), want in zip(objects, original):
            np.testing.assert_array_equal(got, want, err_msg=f"flip at byte {pos} changed the data silently")
        harmless += 1
    assert harmless < len(msg) // 2  # most bytes matter


def test_metadata_and_descriptor_entry_points_on_garbage():
    for junk in (b"", b"TENSOGRM", b"\x00" * 100, b"TENSOGRM" + b"\xff" * 100):
        for call in (tensogram.decode, tensogram.decode_metadata, tensogram.decode_descriptors):
            with pytest.raises(ValueError):
                call(junk)
        assert tensogram.scan(junk) == []
        report = tensogram.validate(junk)
        assert report["issues"] and report["issues"][0]["severity"] == "error"


def test_object_index_out_of_range(message):
    msg, _ = message
    with pytest.raises(ValueError, match="ObjectError: "):
        tensogram.decode_object(msg, 3)
    with pytest.raises(OverflowError, match="^can't convert negative int to unsigned$"):
        tensogram.decode_object(msg, -1)
    with pytest.raises(ValueError):
        tensogram.decode_range(msg, 7, [(0, 1)])


def test_range_outside_the_object(message):
    msg, _ = message
    with pytest.raises(ValueError):
        tensogram.decode_range(msg, 1, [(10, 5)])
    with pytest.raises(ValueError):
        tensogram.decode_range(msg, 1, [(-1, 2)])
    with pytest.raises(ValueError):
        tensogram.decode_range(msg, 1, [(0,)])


def test_wrong_argument_types():
    with pytest.raises(TypeError):
        tensogram.decode("not bytes")
    with pytest.raises(TypeError):
        tensogram.decode(12)
    desc = {"type": "ntensor", "shape": [2], "dtype": "float64"}
    with pytest.raises(TypeError, match="^argument 'descriptors_and_data': 'tuple' object is not an instance of 'list'$"):
        tensogram.encode({}, ((desc, np.zeros(2)),))
    with pytest.raises(ValueError, match="length 2"):
        tensogram.encode({}, [(desc, np.zeros(2), None)])
    with pytest.raises(ValueError, match="contiguous"):
        tensogram.encode({}, [(desc, np.zeros(4)[::2])])
    with pytest.raises(ValueError, match="float32 array but the descriptor's dtype is float64"):
        tensogram.encode({}, [(desc, np.zeros(2, dtype=np.float32))])
    with pytest.raises(ValueError, match="MetadataError: "):
        tensogram.encode({}, [(desc, np.zeros(3))])  # length does not match the shape
    with pytest.raises(ValueError, match="unknown dtype: float128"):
        tensogram.encode({}, [({**desc, "dtype": "float128"}, b"")])
    with pytest.raises(ValueError, match="EncodingError: unknown compression"):
        tensogram.encode({}, [({**desc, "compression": "brotli"}, np.zeros(2))])
    with pytest.raises(ValueError, match="cannot convert tuple to CBOR"):
        tensogram.encode({"x": (1, 2)}, [(desc, np.zeros(2))])
    with pytest.raises(ValueError, match="64 bits"):
        tensogram.encode({"x": 2**70}, [(desc, np.zeros(2))])


def test_hostile_shape_does_not_allocate():
    # 2^62 elements declared for 16 bytes of data: refused before any allocation.
    desc = {"type": "ntensor", "shape": [2**31, 2**31], "dtype": "float64"}
    with pytest.raises(ValueError):
        tensogram.encode({}, [(desc, b"\0" * 16)])


def test_corrupt_file_keeps_earlier_messages_readable(tmp_path, message):
    msg, original = message
    path = tmp_path / "damaged.tgm"
    path.write_bytes(msg + msg + msg[: len(msg) // 2])  # a crash mid-append
    with tensogram.TensogramFile.open(path) as f:
        assert len(f) == 2
        np.testing.assert_array_equal(f[1].objects[1][1], original[1])
    report = tensogram.validate_file(path)
    assert len(report["messages"]) == 2 and report["file_issues"][0]["byte_offset"] == 2 * len(msg)


def test_missing_file():
    with pytest.raises(OSError):
        tensogram.TensogramFile.open("/nonexistent/dir/file.tgm").message_count()
    with pytest.raises(FileNotFoundError):
        tensogram.validate_file("/nonexistent/dir/file.tgm")
