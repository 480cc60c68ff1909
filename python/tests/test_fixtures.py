"""Every reference-produced fixture in ../shared/fixtures/tgm decodes to the
values its README lists (those were decoded by an independent decoder)."""

import numpy as np
import pytest

import tensogram

HASH_FLAGGED = ["simple_f32", "hash_xxh3", "mars_metadata", "multi_message", "multi_object",
                "multi_object_xxh3", "metadata_parity"]  # fmt: skip
LEGACY = {  # file → message count; message i holds [i, i+1, i+2, i+3] (float32, little endian)
    "single-msg": 1, "single-msg-footer": 1, "two-msg": 2, "ten-msg": 10, "ten-msg-footer": 10,
    "hundred-msg": 100, "hundred-msg-footer": 100, "thousand-msg": 1000, "thousand-msg-footer": 1000,
    "streaming-tail": 10,
}  # fmt: skip

# README tables: object values, dtype and byte order per fixture (first message).
EXPECTED = {
    "simple_f32": [("float32", "big", [4], [1.0, 2.0, 3.0, 4.0])],
    "hash_xxh3": [("float32", "big", [4], [1.0, 2.0, 3.0, 4.0])],
    "mars_metadata": [("float64", "big", [2, 3], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])],
    "multi_object": [
        ("float32", "big", [2], [1.5, 2.5]),
        ("int64", "big", [3], [100, -200, 300]),
        ("uint8", "big", [5], [10, 20, 30, 40, 50]),
    ],
    "metadata_parity": [("float32", "little", [2, 3], [0.0] * 6), ("float64", "little", [4], [0.0] * 4)],
}


def read(fixtures_dir, name):
    return (fixtures_dir / "tgm" / f"{name}.tgm").read_bytes()


def test_the_fixture_list_is_complete(fixtures_dir):
    names = {p.stem for p in (fixtures_dir / "tgm").glob("*.tgm")}
    assert names == set(HASH_FLAGGED) | set(LEGACY)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_values_dtypes_and_shapes(fixtures_dir, name):
    meta, objects = tensogram.decode(read(fixtures_dir, name), verify_hash=True)
    assert len(objects) == len(EXPECTED[name]) == meta.num_objects
    for (desc, arr), (dtype, order, shape, values) in zip(objects, EXPECTED[name]):
        assert desc.dtype == dtype and desc.byte_order == order and desc.shape == shape
        assert arr.dtype == np.dtype(dtype) and arr.dtype.isnative
        assert arr.shape == tuple(shape)
        np.testing.assert_array_equal(arr.ravel(), np.array(values, dtype=dtype))


def test_multi_message_fixture(fixtures_dir):
    buf = read(fixtures_dir, "multi_message")
    assert tensogram.scan(buf) == [(0, 584), (584, 584)]
    values = [m.objects[0][1].tolist() for m in tensogram.iter_messages(buf, verify_hash=True)]
    assert values == [[1.0, 2.0], [3.0, 4.0]]


def test_metadata_parity_lookups(fixtures_dir):
    meta = tensogram.decode_metadata(read(fixtures_dir, "metadata_parity"))
    assert meta.get_path("mars.class") == "od"
    assert meta.get_path_at(1, "mars.class") == "ea"
    assert meta["source"] == "parity-fixture"
    assert meta["big"] == 2147483648 and meta["count"] == -5 and meta["ratio"] == 0.5
    assert meta["flag"] is True and meta["note"] == "" and meta["levels"] == [1000, 850, 500]
    assert "only0" in meta and not meta.has_path_at(1, "only0")
    assert not meta.has_path("_reserved_.tensor")
    assert meta.base[0]["_reserved_"]["tensor"] == {"ndim": 2, "dtype": "float32", "shape": [2, 3], "strides": [3, 1]}
    assert meta.reserved["encoder"] == {"name": "tensogram", "version": "0.23.0"}


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_legacy_hash_family(fixtures_dir, name):
    buf = read(fixtures_dir, name)
    entries = tensogram.scan(buf)
    assert len(entries) == LEGACY[name]
    # every message holds [i, i+1, i+2, i+3] and its msg_index
    for i, (offset, length) in enumerate(entries):
        meta, objects = tensogram.decode(buf[offset : offset + length])
        assert meta.get_path("fixture.msg_index") == i
        np.testing.assert_array_equal(objects[0][1], np.arange(i, i + 4, dtype=np.float32))
    # no per-frame HASH_PRESENT bit: verification is impossible (README)
    with pytest.raises(tensogram.MissingHashError) as info:
        tensogram.decode(buf, verify_hash=True)
    assert info.value.object_index == 0


def test_streaming_tail_scan(fixtures_dir):
    buf = read(fixtures_dir, "streaming-tail")
    assert tensogram.scan(buf) == [(592 * i, 592) for i in range(9)] + [(5328, 656)]


@pytest.mark.parametrize("name", HASH_FLAGGED + sorted(LEGACY))
def test_every_message_through_the_file_api(fixtures_dir, name):
    path = fixtures_dir / "tgm" / f"{name}.tgm"
    buf = path.read_bytes()
    with tensogram.TensogramFile.open(path) as f:
        assert len(f) == len(tensogram.scan(buf))
        for i in range(len(f)) if len(f) <= 10 else (0, len(f) // 2, len(f) - 1):
            offset, length = tensogram.scan(buf)[i]
            expected = tensogram.decode(buf[offset : offset + length])
            got = f[i]
            assert got.metadata.base == expected.metadata.base
            for (d1, a1), (d2, a2) in zip(got.objects, expected.objects):
                assert d1.dtype == d2.dtype and d1.shape == d2.shape
                np.testing.assert_array_equal(a1, a2)


@pytest.mark.parametrize("name", HASH_FLAGGED)
def test_hash_flagged_fixtures_validate_cleanly(fixtures_dir, name):
    report = tensogram.validate_file(fixtures_dir / "tgm" / f"{name}.tgm", level="full")
    assert report["file_issues"] == []
    for m in report["messages"]:
        assert m["hash_verified"] is True
        assert [i for i in m["issues"] if i["severity"] == "error"] == []
