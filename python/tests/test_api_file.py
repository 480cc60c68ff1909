"""Tests of ``tensogram.TensogramFile`` against spec 04 Part B (B.6 table, B.7).

Files are written into pytest's tmp_path; the reference fixtures in
/work/shared/fixtures/tgm are opened in place (never copied).  Expected
values for the fixtures come from /work/shared/fixtures/tgm/README.md.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

import tensogram

FIXTURES = Path("/work/shared/fixtures/tgm")


def desc(shape, dtype="float32", **extra):
    """Descriptor dict of spec 04 B.3 with the three required keys."""
    return {"type": "ntensor", "shape": list(shape), "dtype": dtype, **extra}


# Messages written by the `written` fixture: different metadata, object
# counts and pipelines (spec 04 B.3 encoding/filter/compression values).
# Each entry: (global_meta_dict, [(descriptor, array)], absolute tolerance).
def _inputs():
    grid = np.linspace(250.0, 310.0, 120).reshape(10, 12)
    return [
        ({"base": [{"name": "plain", "step": 0}]},
         [(desc([4, 5]), np.arange(20, dtype=np.float32).reshape(4, 5))], 0.0),
        ({"base": [{"name": "zstd"}], "_extra_": {"run": 1}},
         [(desc([10, 12], "float64", compression="zstd"), grid)], 0.0),
        ({"base": [{"name": "packed"}], "experiment": "x1"},
         [(desc([10, 12], "float64", encoding="simple_packing", sp_bits_per_value=24), grid)],
         1e-3),
        ({"base": [{"name": "a"}, {"name": "b"}]},
         [(desc([6], "int32", filter="shuffle", compression="lz4", shuffle_element_size=4),
           np.array([1, -2, 3, -4, 5, -6], dtype=np.int32)),
          (desc([3], "uint8"), np.array([7, 8, 9], dtype=np.uint8))], 0.0),
        ({"base": [{"name": "last", "mars": {"param": "2t"}}]},
         [(desc([100]), np.arange(100, dtype=np.float32) * 0.5)], 0.0),
    ]


@pytest.fixture
def written(tmp_path):
    """A file holding the five messages of ``_inputs()``, appended one by one."""
    path = tmp_path / "written.tgm"
    inputs = _inputs()
    f = tensogram.TensogramFile.create(str(path))
    for meta, pairs, _tol in inputs:
        f.append(meta, pairs)
    f.close()
    return path, inputs


def assert_message_matches(message, meta_in, pairs, tol):
    """A decoded ``Message`` carries the input arrays and base entries."""
    assert isinstance(message, tensogram.Message)
    meta, objects = message
    assert isinstance(meta, tensogram.Metadata)
    assert len(objects) == len(pairs)
    for i, ((d_out, arr_out), (d_in, arr_in)) in enumerate(zip(objects, pairs)):
        assert isinstance(d_out, tensogram.DataObjectDescriptor)
        assert d_out.shape == d_in["shape"]
        assert d_out.dtype == d_in["dtype"]
        assert d_out.encoding == d_in.get("encoding", "none")
        assert d_out.compression == d_in.get("compression", "none")
        assert arr_out.shape == tuple(d_in["shape"])
        if tol:
            np.testing.assert_allclose(arr_out, arr_in, atol=tol, rtol=0)
        else:
            np.testing.assert_array_equal(arr_out, arr_in)
        # Per-object application metadata survives (spec 04 B.2 "base").
        for key, value in meta_in["base"][i].items():
            assert meta.base[i][key] == value


def assert_same_decode(a, b):
    """Two decoded messages carry identical metadata sections and objects."""
    meta_a, objs_a = a
    meta_b, objs_b = b
    assert meta_a.base == meta_b.base
    assert meta_a.extra == meta_b.extra
    assert len(objs_a) == len(objs_b)
    for (da, xa), (db, xb) in zip(objs_a, objs_b):
        assert (da.obj_type, da.shape, da.strides, da.dtype, da.byte_order) == (
            db.obj_type, db.shape, db.strides, db.dtype, db.byte_order)
        assert (da.encoding, da.filter, da.compression, da.params) == (
            db.encoding, db.filter, db.compression, db.params)
        assert xa.dtype == xb.dtype
        np.testing.assert_array_equal(xa, xb)


# --------------------------------------------------------------------------
# create / append / open / count


def test_create_append_open_counts(written):
    path, inputs = written
    with tensogram.TensogramFile.open(str(path)) as f:
        assert f.message_count() == len(inputs)
        assert len(f) == len(inputs)


def test_create_truncates_existing_file(tmp_path):
    # spec 04 B.6: create "creates/truncates".
    path = tmp_path / "t.tgm"
    path.write_bytes(tensogram.encode({}, [(desc([2]), np.zeros(2, np.float32))]))
    f = tensogram.TensogramFile.create(str(path))
    f.close()
    assert path.stat().st_size == 0
    with tensogram.TensogramFile.open(str(path)) as g:
        assert len(g) == 0


def test_open_sees_externally_concatenated_message(written):
    # A message appended to the file's bytes by other means is found by the scan.
    path, inputs = written
    data = path.read_bytes()
    extra = tensogram.encode({"base": [{"name": "added"}]}, [(desc([1]), np.ones(1, np.float32))])
    path.write_bytes(data + extra)
    with tensogram.TensogramFile.open(str(path)) as f:
        assert len(f) == len(inputs) + 1
        assert f[-1].metadata.base[0]["name"] == "added"


def test_every_message_matches_its_input(written):
    path, inputs = written
    with tensogram.TensogramFile.open(str(path)) as f:
        for i, (meta_in, pairs, tol) in enumerate(inputs):
            assert_message_matches(f[i], meta_in, pairs, tol)
        # Message-level annotations land in extra (spec 04 B.2).
        assert f[1].metadata.extra == {"run": 1}
        assert f[2].metadata.extra == {"experiment": "x1"}


def test_append_nan_rules(tmp_path):
    # B.6 append takes encode's options; B.7: NaN rejected by default.
    values = np.array([1.0, np.nan, 3.0], dtype=np.float64)
    path = tmp_path / "nan.tgm"
    f = tensogram.TensogramFile.create(str(path))
    with pytest.raises(ValueError):
        f.append({}, [(desc([3], "float64"), values)])
    f.append({}, [(desc([3], "float64"), values)], allow_nan=True)
    f.close()
    with tensogram.TensogramFile.open(str(path)) as g:
        assert len(g) == 1
        np.testing.assert_array_equal(g[0].objects[0][1], values)  # NaN restored


# --------------------------------------------------------------------------
# indexing


@pytest.mark.parametrize("neg", [-1, -2, -5])
def test_negative_index(written, neg):
    path, inputs = written
    n = len(inputs)
    with tensogram.TensogramFile.open(str(path)) as f:
        meta_in, pairs, tol = inputs[n + neg]
        assert_message_matches(f[neg], meta_in, pairs, tol)
        assert_same_decode(f[neg], f[n + neg])


@pytest.mark.parametrize(
    "sl",
    [slice(1, 4), slice(None, None, 2), slice(None, None, -1), slice(-2, None),
     slice(3, 1, -1), slice(4, 2), slice(10, 20), slice(1, 5, 3)],
)
def test_slices(written, sl):
    path, inputs = written
    with tensogram.TensogramFile.open(str(path)) as f:
        got = f[sl]
        assert isinstance(got, list)
        expected_indices = list(range(len(inputs)))[sl]
        assert len(got) == len(expected_indices)
        for message, idx in zip(got, expected_indices):
            meta_in, pairs, tol = inputs[idx]
            assert_message_matches(message, meta_in, pairs, tol)


@pytest.mark.parametrize("bad", [5, 6, 100, -6, -100])
def test_index_out_of_range_raises_index_error(written, bad):
    path, _ = written
    with tensogram.TensogramFile.open(str(path)) as f:
        with pytest.raises(IndexError):
            f[bad]


@pytest.mark.parametrize("key", ["x", 1.5, None, (0, 1), b"0"])
def test_other_key_types_raise_type_error(written, key):
    path, _ = written
    with tensogram.TensogramFile.open(str(path)) as f:
        with pytest.raises(TypeError):
            f[key]


def test_numpy_integer_index_accepted(written):
    # An integer-like index (operator.index) is an "integer" for indexing.
    path, inputs = written
    with tensogram.TensogramFile.open(str(path)) as f:
        meta_in, pairs, tol = inputs[2]
        assert_message_matches(f[np.int64(2)], meta_in, pairs, tol)


# --------------------------------------------------------------------------
# iteration and context manager


def test_iteration_yields_meta_objects_in_order(written):
    path, inputs = written
    with tensogram.TensogramFile.open(str(path)) as f:
        iterator = iter(f)
        assert isinstance(iterator, tensogram.TensogramFileIter)
        seen = 0
        for (meta, objects), (meta_in, pairs, tol) in zip(f, inputs):
            assert_message_matches(tensogram.Message(meta, objects), meta_in, pairs, tol)
            seen += 1
        assert seen == len(inputs)
        # Iterating twice works (a fresh iterator each time).
        assert sum(1 for _ in f) == len(inputs)


def test_iteration_uses_own_handle_interleaved_with_indexing(written):
    # spec 04 B.6: the iterator "uses its own file handle".
    path, inputs = written
    with tensogram.TensogramFile.open(str(path)) as f:
        it = iter(f)
        first = next(it)
        assert_same_decode(f[-1], f[len(inputs) - 1])
        second = next(it)
        assert first.metadata.base[0]["name"] == "plain"
        assert second.metadata.base[0]["name"] == "zstd"
        assert len(list(it)) == len(inputs) - 2


def test_context_manager_returns_file_and_does_not_suppress(written):
    path, _ = written
    with pytest.raises(KeyError, match="boom"):
        with tensogram.TensogramFile.open(str(path)) as f:
            assert isinstance(f, tensogram.TensogramFile)
            raise KeyError("boom")


def test_calls_after_close_raise_value_error(written):
    path, _ = written
    with tensogram.TensogramFile.open(str(path)) as f:
        assert len(f) == 5
    f.close()  # leaving the block closes nothing (spec 08 §1.8)
    for call in (
        lambda: f.message_count(),
        lambda: len(f),
        lambda: f[0],
        lambda: f.read_message(0),
        lambda: f.messages(),
        lambda: f.decode_message(0),
        lambda: f.file_decode_metadata(0),
        lambda: f.file_decode_object(0, 0),
    ):
        with pytest.raises(ValueError):
            call()


# --------------------------------------------------------------------------
# decode_* members


def test_decode_message(written):
    path, inputs = written
    with tensogram.TensogramFile.open(str(path)) as f:
        for i, (meta_in, pairs, tol) in enumerate(inputs):
            message = f.decode_message(i, verify_hash=True)
            assert_message_matches(message, meta_in, pairs, tol)
            assert_same_decode(message, f[i])


def test_file_decode_metadata(written):
    path, inputs = written
    with tensogram.TensogramFile.open(str(path)) as f:
        for i, (meta_in, pairs, _tol) in enumerate(inputs):
            meta = f.file_decode_metadata(i)
            assert isinstance(meta, tensogram.Metadata)
            assert meta.num_objects == len(pairs)
            for j, entry in enumerate(meta_in["base"]):
                for key, value in entry.items():
                    assert meta.base[j][key] == value


def test_file_decode_descriptors_dict_shape(written):
    path, inputs = written
    with tensogram.TensogramFile.open(str(path)) as f:
        for i, (_meta_in, pairs, _tol) in enumerate(inputs):
            result = f.file_decode_descriptors(i)
            assert isinstance(result, dict)
            assert set(result) == {"metadata", "descriptors"}
            assert isinstance(result["metadata"], tensogram.Metadata)
            descriptors = result["descriptors"]
            assert isinstance(descriptors, list)
            assert [d.shape for d in descriptors] == [d_in["shape"] for d_in, _ in pairs]
            assert [d.dtype for d in descriptors] == [d_in["dtype"] for d_in, _ in pairs]
            assert all(isinstance(d, tensogram.DataObjectDescriptor) for d in descriptors)


def test_file_decode_object_dict_shape(written):
    path, inputs = written
    with tensogram.TensogramFile.open(str(path)) as f:
        for i, (_meta_in, pairs, tol) in enumerate(inputs):
            for j, (d_in, arr_in) in enumerate(pairs):
                result = f.file_decode_object(i, j, verify_hash=True)
                assert isinstance(result, dict)
                assert set(result) == {"metadata", "descriptor", "data"}
                assert isinstance(result["metadata"], tensogram.Metadata)
                assert isinstance(result["descriptor"], tensogram.DataObjectDescriptor)
                assert result["descriptor"].shape == d_in["shape"]
                np.testing.assert_allclose(result["data"], arr_in, atol=tol, rtol=0)


def _tampered_file(tmp_path, hash_algo="xxh3"):
    """One uncompressed two-object message whose object 1 payload has one byte flipped."""
    a = np.arange(8, dtype=np.float64)
    b = np.arange(100, 116, dtype=np.float64)
    msg = bytearray(tensogram.encode({}, [(desc([8], "float64"), a), (desc([16], "float64"), b)],
                                     hash=hash_algo))
    pos = bytes(msg).find(b.tobytes())
    assert pos > 0
    msg[pos + 3] ^= 0xFF
    path = tmp_path / "tampered.tgm"
    path.write_bytes(bytes(msg))
    return path, a, b


def test_file_decode_object_verify_hash_detects_tampering(tmp_path):
    path, a, b = _tampered_file(tmp_path)
    with tensogram.TensogramFile.open(str(path)) as f:
        # Untouched object verifies fine; the tampered one raises (spec 04 B.7).
        np.testing.assert_array_equal(f.file_decode_object(0, 0, verify_hash=True)["data"], a)
        with pytest.raises(tensogram.HashMismatchError) as info:
            f.file_decode_object(0, 1, verify_hash=True)
        assert info.value.object_index == 1
        # Default: no verification, the altered payload is returned.
        data = f.file_decode_object(0, 1)["data"]
        assert not np.array_equal(data, b)


def test_file_decode_object_verify_hash_missing_hash(tmp_path):
    path = tmp_path / "nohash.tgm"
    f = tensogram.TensogramFile.create(str(path))
    f.append({}, [(desc([3]), np.ones(3, np.float32))], hash=None)
    f.close()
    with tensogram.TensogramFile.open(str(path)) as f:
        with pytest.raises(tensogram.MissingHashError) as info:
            f.file_decode_object(0, 0, verify_hash=True)
        assert info.value.object_index == 0
        np.testing.assert_array_equal(f.file_decode_object(0, 0)["data"], np.ones(3, np.float32))


def test_file_decode_range_split_and_join(written):
    path, inputs = written
    ranges = [(0, 3), (10, 5), (97, 3)]
    arr_in = inputs[4][1][0][1]
    with tensogram.TensogramFile.open(str(path)) as f:
        parts = f.file_decode_range(4, 0, ranges)
        assert isinstance(parts, list)
        assert len(parts) == len(ranges)
        for part, (start, count) in zip(parts, ranges):
            assert part.ndim == 1
            np.testing.assert_array_equal(part, arr_in[start:start + count])
        joined = f.file_decode_range(4, 0, ranges, join=True)
        assert isinstance(joined, np.ndarray)
        assert joined.ndim == 1
        np.testing.assert_array_equal(
            joined, np.concatenate([arr_in[s:s + c] for s, c in ranges]))


def test_file_decode_range_simple_packing(written):
    # simple_packing supports partial decode (spec 04 B.5 decode_range); output float64.
    path, inputs = written
    flat = inputs[2][1][0][1].ravel()
    with tensogram.TensogramFile.open(str(path)) as f:
        parts = f.file_decode_range(2, 0, [(5, 7), (100, 20)])
        assert parts[0].dtype == np.float64
        np.testing.assert_allclose(parts[0], flat[5:12], atol=1e-3, rtol=0)
        np.testing.assert_allclose(parts[1], flat[100:120], atol=1e-3, rtol=0)


def test_file_decode_range_stream_codec_is_error(written):
    # zstd is a stream codec: range decode → error (spec 04 B.5); we assume
    # ValueError (B.7: compression errors map to ValueError).
    path, _ = written
    with tensogram.TensogramFile.open(str(path)) as f:
        with pytest.raises(ValueError):
            f.file_decode_range(1, 0, [(0, 2)])


# --------------------------------------------------------------------------
# raw messages


def test_read_message_and_messages_equal_encode_output(written):
    # Each raw message decodes to what encode() gives for the same input; only
    # decoded content is compared since _reserved_ uuid/time differ per encode.
    path, inputs = written
    with tensogram.TensogramFile.open(str(path)) as f:
        raws = f.messages()
        assert isinstance(raws, list)
        assert len(raws) == len(inputs)
        for i, (meta_in, pairs, _tol) in enumerate(inputs):
            raw = f.read_message(i)
            assert isinstance(raw, bytes)
            assert raws[i] == raw
            assert raw[:8] == b"TENSOGRM"
            reference = tensogram.encode(meta_in, pairs)
            assert len(raw) == len(reference)
            assert_same_decode(tensogram.decode(raw), tensogram.decode(reference))
        # The raw messages are the file's bytes, in order, gapless.
        assert b"".join(raws) == path.read_bytes()


def test_read_message_out_of_range(written):
    path, inputs = written
    with tensogram.TensogramFile.open(str(path)) as f:
        with pytest.raises((IndexError, ValueError)):
            f.read_message(len(inputs))


# --------------------------------------------------------------------------
# local-only behaviour, source, errors


def test_batch_calls_on_local_file_raise_os_error(written):
    path, _ = written
    with tensogram.TensogramFile.open(str(path)) as f:
        with pytest.raises(OSError):
            f.file_decode_object_batch([0, 4], 0)
        with pytest.raises(OSError):
            f.file_decode_range_batch([0, 4], 0, [(0, 2)])
        with pytest.raises(OSError):
            f.file_decode_range_batch([0], 0, [(0, 2)], join=True)


def test_is_remote_and_source(written):
    path, _ = written
    with tensogram.TensogramFile.open(str(path)) as f:
        assert f.is_remote() is False
        assert f.source() == str(path)


def test_open_missing_file_raises_os_error(tmp_path):
    with pytest.raises(OSError):
        tensogram.TensogramFile.open(str(tmp_path / "does-not-exist.tgm"))


def test_open_accepts_pathlike(written):
    path, inputs = written
    with tensogram.TensogramFile.open(path) as f:
        assert len(f) == len(inputs)


# --------------------------------------------------------------------------
# reference fixtures (README.md in the fixture directory)

MULTI_MESSAGE_FIXTURES = {
    "multi_message.tgm": 2,
    "two-msg.tgm": 2,
    "ten-msg.tgm": 10,
    "hundred-msg.tgm": 100,
    "thousand-msg.tgm": 1000,
    "ten-msg-footer.tgm": 10,
    "hundred-msg-footer.tgm": 100,
    "thousand-msg-footer.tgm": 1000,
    "streaming-tail.tgm": 10,
}

SINGLE_MESSAGE_FIXTURES = [
    "simple_f32.tgm", "hash_xxh3.tgm", "mars_metadata.tgm", "multi_object.tgm",
    "multi_object_xxh3.tgm", "metadata_parity.tgm", "single-msg.tgm", "single-msg-footer.tgm",
]


def _expected_legacy_values(i):
    # Legacy-hash family: message i holds [i, i+1, i+2, i+3] as float32.
    return np.arange(i, i + 4, dtype=np.float32)


@pytest.mark.parametrize("name,count", sorted(MULTI_MESSAGE_FIXTURES.items()))
def test_fixture_message_counts_and_decode(name, count):
    with tensogram.TensogramFile.open(str(FIXTURES / name)) as f:
        assert len(f) == count
        assert f.message_count() == count
        raws = f.messages()
        assert len(raws) == count
        for i in range(count):
            assert f.read_message(i) == raws[i]
            from_file = f.decode_message(i)
            from_bytes = tensogram.decode(f.read_message(i))
            assert_same_decode(from_file, from_bytes)
            (_d, values), = from_file.objects
            if name == "multi_message.tgm":
                expected = np.array([[1.0, 2.0], [3.0, 4.0]][i], np.float32)
            else:
                expected = _expected_legacy_values(i)
                assert from_file.metadata.base[0]["fixture"] == {"shape": [4], "msg_index": i}
            np.testing.assert_array_equal(values, expected)


@pytest.mark.parametrize("name", SINGLE_MESSAGE_FIXTURES)
def test_single_message_fixtures(name):
    with tensogram.TensogramFile.open(str(FIXTURES / name)) as f:
        assert len(f) == 1
        raw = f.read_message(0)
        assert raw == (FIXTURES / name).read_bytes()
        assert_same_decode(f[0], tensogram.decode(raw))
        assert_same_decode(f[-1], f.decode_message(0))


def test_fixture_values_from_readme():
    with tensogram.TensogramFile.open(str(FIXTURES / "simple_f32.tgm")) as f:
        d, x = f[0].objects[0]
        assert d.byte_order == "big"
        np.testing.assert_array_equal(x, np.array([1, 2, 3, 4], np.float32))
    with tensogram.TensogramFile.open(str(FIXTURES / "mars_metadata.tgm")) as f:
        meta, ((d, x),) = f[0]
        assert meta.base[0]["mars"] == {"step": 12, "type": "fc", "class": "od"}
        np.testing.assert_array_equal(x, np.arange(1, 7, dtype=np.float64).reshape(2, 3))
    with tensogram.TensogramFile.open(str(FIXTURES / "multi_object.tgm")) as f:
        result = f.file_decode_object(0, 1, verify_hash=True)
        np.testing.assert_array_equal(result["data"], np.array([100, -200, 300], np.int64))
        assert result["data"].dtype == np.int64
        parts = f.file_decode_range(0, 2, [(1, 2), (4, 1)])
        np.testing.assert_array_equal(parts[0], np.array([20, 30], np.uint8))
        np.testing.assert_array_equal(parts[1], np.array([50], np.uint8))


def test_legacy_fixture_verify_hash_is_missing_hash():
    # README: legacy-hash files fail verify_hash with MissingHash (object 0).
    with tensogram.TensogramFile.open(str(FIXTURES / "ten-msg.tgm")) as f:
        with pytest.raises(tensogram.MissingHashError) as info:
            f.decode_message(3, verify_hash=True)
        assert info.value.object_index == 0


@pytest.mark.parametrize(
    "name", ["multi_message.tgm", "ten-msg.tgm", "hundred-msg-footer.tgm", "streaming-tail.tgm"])
def test_bidirectional_false_gives_same_messages(name):
    path = str(FIXTURES / name)
    with tensogram.TensogramFile.open(path) as both, \
            tensogram.TensogramFile.open(path, bidirectional=False) as forward:
        assert len(forward) == len(both) == MULTI_MESSAGE_FIXTURES[name]
        assert forward.messages() == both.messages()
        assert_same_decode(forward[-1], both[-1])


def test_streaming_tail_last_message_is_streaming_form():
    # README: message 9 has total_length 0 and values [9, 10, 11, 12].
    with tensogram.TensogramFile.open(str(FIXTURES / "streaming-tail.tgm")) as f:
        raw = f.read_message(9)
        assert len(raw) == 656
        assert raw[16:24] == bytes(8)
        np.testing.assert_array_equal(f[9].objects[0][1], np.arange(9, 13, dtype=np.float32))


# --------------------------------------------------------------------------
# concurrency


def test_threads_share_one_file_for_file_decode_object(written):
    path, inputs = written
    expected = [[arr for _d, arr in pairs] for _meta, pairs, _tol in inputs]
    tolerances = [tol for _meta, _pairs, tol in inputs]
    jobs = [(i, j) for i, pairs in enumerate(expected) for j in range(len(pairs))]
    failures = []

    with tensogram.TensogramFile.open(str(path)) as f:
        barrier = threading.Barrier(8)

        def worker(seed):
            try:
                barrier.wait()
                for k in range(40):
                    i, j = jobs[(seed * 7 + k) % len(jobs)]
                    result = f.file_decode_object(i, j)
                    np.testing.assert_allclose(result["data"], expected[i][j],
                                               atol=tolerances[i], rtol=0)
            except Exception as exc:  # collected and re-raised in the main thread
                failures.append(exc)

        threads = [threading.Thread(target=worker, args=(s,)) for s in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not failures, failures[0]
