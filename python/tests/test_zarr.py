"""tensogram.zarr.TensogramStore: a read-only Zarr format 2 store over .tgm files.

Values read through zarr and xarray are compared with the module's own decode
(``TensogramFile.file_decode_object``) for every dtype and several pipelines;
module calls are observed by replacing ``tensogram._naming.open_source`` with a
recording proxy (xarray_helpers.CountingFile).
"""

from __future__ import annotations

import json
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import zarr
from range_server import serve
from test_docs import python_blocks
from xarray_helpers import CountingFile, desc, payload_calls, write_tgm

import tensogram
from tensogram import _naming
from tensogram.zarr import TensogramStore

DOCS = Path(__file__).resolve().parents[2] / "docs"

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = ["float16", "float32", "float64", "complex64", "complex128"]


def values_for(dtype: str, shape, rng) -> np.ndarray:
    n = int(np.prod(shape))
    if dtype in INT_DTYPES:
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True).reshape(shape)
    if dtype.startswith("complex"):
        return (rng.normal(size=n) + 1j * rng.normal(size=n)).astype(dtype).reshape(shape)
    return rng.normal(size=n).astype(dtype).reshape(shape)


def api_values(path, msg: int, obj: int) -> np.ndarray:
    with tensogram.TensogramFile.open(str(path)) as f:
        return np.asarray(f.file_decode_object(msg, obj)["data"])


@pytest.fixture
def calls(monkeypatch):
    """Every module call the stores of this test make, in order."""
    recorded: list = []
    real_open = _naming.open_source
    monkeypatch.setattr(_naming, "open_source", lambda *a, **k: CountingFile(real_open(*a, **k), recorded))
    return recorded


def zarray(store, path: str) -> dict:
    return json.loads(store[f"{path}/.zarray"])


def zattrs(store, path: str) -> dict:
    return json.loads(store[f"{path}/.zattrs"])


# ---- values: every dtype, several pipelines ---------------------------------------------------


def test_every_dtype_reads_as_the_api_decodes(tmp_path, rng):
    pairs = []
    names = []
    for dtype in INT_DTYPES + FLOAT_DTYPES:
        pairs.append((desc([3, 4], dtype), values_for(dtype, (3, 4), rng)))
        names.append(dtype)
    bf16_bits = np.array([0x3F80, 0x4000, 0xC040, 0x0001], dtype=np.uint16)  # 1, 2, -3, tiny
    pairs.append((desc([2, 2], "bfloat16"), bf16_bits.reshape(2, 2)))
    names.append("bfloat16")
    flags = rng.integers(0, 2, size=21).astype(bool)
    pairs.append((desc([21], "bitmask"), np.packbits(flags)))
    names.append("bitmask")
    path = write_tgm(tmp_path / "dtypes.tgm", [({"base": [{"name": n} for n in names]}, pairs)])

    store = TensogramStore(path, message_index=0)
    root = zarr.open(store, mode="r")
    for obj, name in enumerate(names):
        expected = api_values(path, 0, obj)
        got = root[name][...]
        meta = zarray(store, name)
        assert meta["dtype"][0] in "<|", meta
        assert meta["compressor"] is None and meta["filters"] is None
        if name == "bfloat16":
            # No Zarr v2 dtype: the raw bit patterns, whatever numpy extension decodes them.
            assert got.dtype == np.uint16 and got.shape == (2, 2)
            assert got.ravel().tolist() == expected.view(np.uint16).ravel().tolist() == bf16_bits.tolist()
        elif name == "bitmask":
            assert got.dtype == np.uint8 and got.shape == (3,)
            assert np.array_equal(got, expected)
            assert np.array_equal(np.unpackbits(got)[:21].astype(bool), flags)
        else:
            assert got.dtype == np.dtype(name) and got.shape == (3, 4)
            assert np.array_equal(got, expected), name
        attrs = zattrs(store, name)
        assert attrs["_tensogram_dtype"] == name
        assert attrs["_tensogram_object_index"] == obj


def test_big_endian_source_comes_out_little_endian_with_the_same_values(tmp_path, rng):
    values = rng.normal(size=(5, 6)).astype(">f8")
    ints = np.arange(-7, 5, dtype=">i4").reshape(3, 4)
    path = write_tgm(
        tmp_path / "be.tgm",
        [({"base": [{"name": "x"}, {"name": "i"}]},
          [(desc([5, 6], "float64", byte_order="big"), values), (desc([3, 4], "int32", byte_order="big"), ints)])],
    )
    store = TensogramStore(path, message_index=0)
    assert zarray(store, "x")["dtype"] == "<f8" and zarray(store, "i")["dtype"] == "<i4"
    assert zattrs(store, "x")["_tensogram_byte_order"] == "big"
    raw = np.frombuffer(store["x/0.0"], dtype="<f8").reshape(5, 6)
    assert np.array_equal(raw, values)
    root = zarr.open(store, mode="r")
    assert np.array_equal(root["x"][...], values) and np.array_equal(root["i"][...], ints)


PIPELINES = {
    "zstd": ("float64", {"compression": "zstd", "zstd_level": 3}),
    "lz4": ("int32", {"compression": "lz4"}),
    "shuffle_zstd": ("float32", {"filter": "shuffle", "shuffle_element_size": 4, "compression": "zstd"}),
    "szip": ("int32", {"compression": "szip", "szip_rsi": 128, "szip_block_size": 16, "szip_flags": 8}),
    "blosc2": ("float64", {"compression": "blosc2", "blosc2_codec": "zstd", "blosc2_clevel": 5}),
    "simple_packing": ("float64", {"encoding": "simple_packing", "sp_bits_per_value": 16}),
    "simple_packing_szip": ("float64", {"encoding": "simple_packing", "sp_bits_per_value": 24,
                                        "compression": "szip", "szip_rsi": 128, "szip_block_size": 16,
                                        "szip_flags": 8}),
    "zfp_fixed_rate": ("float64", {"compression": "zfp", "zfp_mode": "fixed_rate", "zfp_rate": 24}),
    "zfp_fixed_accuracy": ("float64", {"compression": "zfp", "zfp_mode": "fixed_accuracy", "zfp_tolerance": 0.01}),
}


@pytest.mark.parametrize("block_bytes", [None, 2048])
def test_pipelines_read_as_the_api_decodes(tmp_path, rng, block_bytes):
    shape = (40, 64)
    pairs = []
    for dtype, pipeline in PIPELINES.values():
        if dtype == "int32":
            data = rng.integers(-1000, 1000, size=shape, dtype=np.int32)
        else:
            data = np.cumsum(rng.normal(size=shape), axis=1).astype(dtype)
        pairs.append((desc(list(shape), dtype, **pipeline), data))
    path = write_tgm(tmp_path / "pipelines.tgm", [({"base": [{"name": n} for n in PIPELINES]}, pairs)])

    store = TensogramStore(path, message_index=0, block_bytes=block_bytes)
    root = zarr.open(store, mode="r")
    for obj, name in enumerate(PIPELINES):
        expected = api_values(path, 0, obj)
        assert np.array_equal(root[name][...], expected), name
        assert np.array_equal(root[name][7:23, 5:9], expected[7:23, 5:9]), name
        assert np.array_equal(root[name][-1], expected[-1]), name
        ranged = _naming.supports_range_decode(tensogram.TensogramFile.open(path).file_decode_descriptors(0)
                                               ["descriptors"][obj])
        chunks = tuple(zarray(store, name)["chunks"])
        if block_bytes and ranged:
            row_bytes = 64 * np.dtype(expected.dtype).itemsize
            assert chunks == (max(1, block_bytes // row_bytes), 64), name
        else:
            assert chunks == shape, name
    # The range-decodable pipelines really are split here (else the test proves nothing).
    split = [n for n in PIPELINES if tuple(zarray(store, n)["chunks"]) != shape]
    assert (set(split) == {"szip", "blosc2", "simple_packing", "simple_packing_szip", "zfp_fixed_rate"}
            if block_bytes else not split)


def test_range_chunks_decode_only_the_blocks_a_slice_needs(tmp_path, rng, calls):
    data = rng.normal(size=(256, 100)).astype(np.float32)  # 400 bytes a row
    path = write_tgm(tmp_path / "big.tgm",
                     [({"base": [{"name": "t"}]}, [(desc([256, 100], "float32"), data)])])
    store = TensogramStore(path, message_index=0, block_bytes=4000)  # 10 rows a chunk
    assert not payload_calls(calls)  # construction reads metadata only
    assert zarray(store, "t")["chunks"] == [10, 100]
    assert len([k for k in store if k.startswith("t/")]) == 26 + 2
    assert not payload_calls(calls)  # listing keys decodes nothing

    root = zarr.open(store, mode="r")
    assert np.array_equal(root["t"][12:25, 3:7], data[12:25, 3:7])
    decoded = payload_calls(calls)
    assert [c[0] for c in decoded] == ["file_decode_range", "file_decode_range"]
    elements = [count for c in decoded for _offset, count in c[1][2]]
    assert elements == [1000, 1000] and sum(elements) < data.size / 10
    assert [c[1][2][0][0] for c in decoded] == [1000, 2000]

    # The last block is short (256 = 25 * 10 + 6); zarr gets it padded to full size.
    del calls[:]
    assert np.array_equal(root["t"][250:], data[250:])
    assert [c[1][2] for c in payload_calls(calls)] == [[(25000, 600)]]
    assert len(store["t/25.0"]) == 10 * 100 * 4
    assert np.array_equal(root["t"][...], data)


def test_small_or_non_range_objects_are_one_chunk_read_whole(tmp_path, rng, calls):
    data = rng.normal(size=(30, 8))
    path = write_tgm(tmp_path / "s.tgm", [({"base": [{"name": "small"}, {"name": "z"}]},
                                           [(desc([30, 8], "float64"), data),
                                            (desc([30, 8], "float64", compression="zstd"), data)])])
    store = TensogramStore(path, message_index=0, block_bytes=100)
    assert zarray(store, "small")["chunks"] == [1, 8]  # 64-byte rows, 100-byte blocks
    assert zarray(store, "z")["chunks"] == [30, 8]  # zstd: no partial reads
    assert np.array_equal(zarr.open(store, mode="r")["z"][3], data[3])
    assert [c[0] for c in payload_calls(calls)] == ["file_decode_object"]
    whole = TensogramStore(path, message_index=0)  # by default every object is one chunk
    assert zarray(whole, "small")["chunks"] == [30, 8]
    assert TensogramStore(path, message_index=0, block_bytes=0).listdir("small") == [".zarray", ".zattrs", "0.0"]


def test_zero_dimensional_and_empty_objects(tmp_path):
    path = write_tgm(tmp_path / "z.tgm", [({"base": [{"name": "scalar"}, {"name": "empty"}]},
                                           [(desc([], "float64"), np.array(2.5)),
                                            (desc([0, 4], "int16"), np.zeros((0, 4), np.int16))])])
    store = TensogramStore(path, message_index=0)
    root = zarr.open(store, mode="r")
    assert root["scalar"][()] == 2.5 and "scalar/0" in store
    assert root["empty"].shape == (0, 4) and root["empty"][...].shape == (0, 4)
    assert not [k for k in store if k.startswith("empty/") and not k.split("/")[-1].startswith(".z")]
    assert len(store) == len(list(store))


# ---- layout, names, attributes --------------------------------------------------------------


def three_messages(tmp_path, rng):
    lat = np.linspace(-90, 90, 5)
    messages = []
    for step in range(3):
        messages.append((
            {"base": [{"name": "lat"}, {"name": "t2m", "units": "K", "mars": {"step": step}},
                      {"name": "t2m", "units": "K"}, {"name": "a/b"}, {"name": "c\\d"}, {"name": ".zattrs"}],
             "_extra_": {"centre": "test", "step": step}},
            [(desc([5], "float64"), lat),
             (desc([5, 7], "float32"), rng.normal(size=(5, 7)).astype(np.float32)),
             (desc([5, 7], "float32", compression="zstd"), rng.normal(size=(5, 7)).astype(np.float32)),
             (desc([2], "int64"), np.array([step, -step])),
             (desc([1], "int8"), np.array([step], np.int8)), (desc([1], "int8"), np.array([-step], np.int8))],
        ))
    return write_tgm(tmp_path / "three.tgm", messages)


def test_multi_message_layout_and_consolidated_metadata(tmp_path, rng):
    path = three_messages(tmp_path, rng)
    store = TensogramStore(path)
    root = zarr.open_consolidated(store, mode="r")
    assert sorted(root.group_keys()) == ["message_0", "message_1", "message_2"]
    assert root.attrs["_tensogram_message_count"] == 3
    for msg in range(3):
        group = root[f"message_{msg}"]
        assert sorted(group.array_keys()) == ["a_b", "c_d", "latitude", "object_5", "t2m", "t2m_1"]
        assert group.attrs["centre"] == "test" and group.attrs["step"] == msg
        assert group.attrs["tensogram_wire_version"] == tensogram.WIRE_VERSION
        for name, obj in [("latitude", 0), ("t2m", 1), ("t2m_1", 2), ("a_b", 3), ("c_d", 4), ("object_5", 5)]:
            assert np.array_equal(group[name][...], api_values(path, msg, obj))
            assert group[name].attrs["_tensogram_object_index"] == obj
            assert group[name].attrs["_tensogram_message_index"] == msg
        assert group["t2m"].attrs["_ARRAY_DIMENSIONS"] == ["latitude", "dim_1"]
        assert group["t2m"].attrs["mars"] == {"step": msg} and group["t2m"].attrs["units"] == "K"
        assert group["t2m_1"].attrs["_tensogram_compression"] == "zstd"
    # The consolidated document is exactly the individual metadata keys.
    consolidated = json.loads(store[".zmetadata"])["metadata"]
    assert consolidated == {k: json.loads(store[k]) for k in store if k.split("/")[-1].startswith(".z")
                            and k != ".zmetadata"}
    # zarr.open walks the individual keys and sees the same tree.
    assert zarr.open(store, mode="r").tree().__repr__() == root.tree().__repr__()


def test_message_index_puts_one_message_at_the_root(tmp_path, rng):
    path = three_messages(tmp_path, rng)
    store = TensogramStore(path, message_index=2)
    root = zarr.open(store, mode="r")
    assert sorted(root.array_keys()) == ["a_b", "c_d", "latitude", "object_5", "t2m", "t2m_1"]
    assert root.attrs["_tensogram_message_index"] == 2
    assert root["a_b"][...].tolist() == [2, -2]
    assert store.listdir("") == [".zattrs", ".zgroup", ".zmetadata", "a_b", "c_d", "latitude", "object_5", "t2m",
                                 "t2m_1"]
    assert store.listdir("t2m") == [".zarray", ".zattrs", "0.0"]
    with pytest.raises(IndexError, match="message_index 3 is out of range"):
        TensogramStore(path, message_index=3)


@pytest.mark.parametrize("message_index", [0, 1, 2])
def test_open_zarr_matches_the_xarray_engine(tmp_path, rng, message_index):
    path = three_messages(tmp_path, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. xarray's "consolidated metadata not found"
        ds = xr.open_zarr(TensogramStore(path, message_index=message_index))
        by_group = xr.open_zarr(TensogramStore(path), group=f"message_{message_index}")
    engine = xr.open_dataset(path, engine="tensogram", message_index=message_index)
    engine = engine.rename({"a/b": "a_b", "c\\d": "c_d", ".zattrs": "object_5"})  # not usable as Zarr names
    for got in (ds, by_group):
        assert set(got.data_vars) == set(engine.data_vars)
        assert set(got.coords) == set(engine.coords)
        for name, variable in engine.variables.items():
            assert got[name].dims == variable.dims, name
            assert np.array_equal(got[name].values, variable.values), name
            assert got[name].dtype == variable.dtype, name
            tensogram_keys = {k for k in got[name].attrs if k.startswith("_tensogram_")}
            assert {k: v for k, v in got[name].attrs.items() if k not in tensogram_keys} == \
                json.loads(json.dumps(variable.attrs)), name
        assert got.attrs["centre"] == engine.attrs["centre"]


def test_variable_key_and_dim_names_follow_the_engine(tmp_path, rng):
    data = rng.normal(size=(3, 4))
    path = write_tgm(tmp_path / "k.tgm", [({"base": [{"mars": {"param": "2t"}, "name": "x", "dim_names": ["a", "b"]},
                                                     {"name": "y"}]},
                                           [(desc([3, 4], "float64"), data), (desc([4, 3], "float64"), data.T)])])
    store = TensogramStore(path, message_index=0, variable_key="mars.param")
    assert sorted(zarr.open(store, mode="r").array_keys()) == ["2t", "y"]
    assert zattrs(store, "2t")["_ARRAY_DIMENSIONS"] == ["a", "b"]
    assert "dim_names" not in zattrs(store, "2t")
    assert zattrs(store, "y")["_ARRAY_DIMENSIONS"] == ["dim_0", "dim_1"]
    named = TensogramStore(path, message_index=0, dim_names=["p", "q"])
    assert zattrs(named, "x")["_ARRAY_DIMENSIONS"] == ["p", "q"]
    with pytest.raises(ValueError, match="dim_names has 1 entries"):
        TensogramStore(path, message_index=0, dim_names=["p"])


def test_attribute_values_keep_their_json_types(tmp_path):
    meta = {"name": "v", "nested": {"k": [1, 2.5, None, True]}, "big": 2**63 + 5, "neg": -(2**63), "nan": float("nan")}
    path = write_tgm(tmp_path / "j.tgm", [({"base": [meta]}, [(desc([1], "float64"), np.ones(1))])])
    attrs = zattrs(TensogramStore(path, message_index=0), "v")
    assert attrs["nested"] == {"k": [1, 2.5, None, True]}
    assert attrs["big"] == 2**63 + 5 and attrs["neg"] == -(2**63) and np.isnan(attrs["nan"])


# ---- reference fixtures, remote --------------------------------------------------------------


def test_reference_fixtures_read_as_the_api_decodes(fixtures_dir):
    files = sorted((fixtures_dir / "tgm").glob("*.tgm"))
    assert len(files) >= 10
    for path in files:
        with tensogram.TensogramFile.open(str(path)) as f:
            count = len(f)
            objects = [len(f.file_decode_descriptors(m)["descriptors"]) for m in range(count)]
        store = TensogramStore(path)
        root = zarr.open_consolidated(store, mode="r")
        assert len(list(root.group_keys())) == count, path.name
        # Every message of the small files; a spread of them in the 100- and 1000-message ones.
        sample = range(count) if count <= 20 else sorted({0, 1, count // 3, count // 2, count - 2, count - 1})
        with tensogram.TensogramFile.open(str(path)) as f:
            for msg in sample:
                group = root[f"message_{msg}"]
                arrays = {a.attrs["_tensogram_object_index"]: a for _, a in group.arrays()}
                assert sorted(arrays) == list(range(objects[msg])), path.name
                for obj, array in arrays.items():
                    expected = np.asarray(f.file_decode_object(msg, obj)["data"])
                    assert np.array_equal(array[...], expected), (path.name, msg, obj)
        store.close()


def test_remote_store_over_http_range_requests(tmp_path, rng):
    data = rng.normal(size=(64, 50))
    path = write_tgm(tmp_path / "r.tgm", [({"base": [{"name": "t", "msg": m}]}, [(desc([64, 50], "float64"), data + m)])
                                          for m in range(2)])
    body = Path(path).read_bytes()
    with serve(body) as (url, handler):
        store = TensogramStore(url, block_bytes=4000)  # 10 rows a chunk
        assert store.source == url
        root = zarr.open_consolidated(store, mode="r")
        assert zarray(store, "message_1/t")["chunks"] == [10, 50]
        before = len(handler.seen_headers)
        assert np.array_equal(root["message_1/t"][33:35], data[33:35] + 1)
        # Chunks come from range requests inside message 1 (the module fetches
        # at least the object's frame: this message is small, so all of it).
        ranges = [h.get("Range") for h in handler.seen_headers[before:]]
        assert ranges and all(r and r.startswith("bytes=") for r in ranges)
        assert min(int(r[6:].split("-")[0]) for r in ranges) >= len(body) // 2
        assert np.array_equal(xr.open_zarr(store, group="message_0")["t"].values, data)
        store.close()
        # storage_options reach the remote open: an unknown option fails it.
        with pytest.raises(OSError, match="no_such_option"):
            TensogramStore(url, storage_options={"no_such_option": "1"})


# ---- protocol, bad input -----------------------------------------------------------------------


def test_store_is_read_only(tmp_path):
    path = write_tgm(tmp_path / "w.tgm", [({"base": [{"name": "v"}]}, [(desc([3], "float64"), np.ones(3))])])
    store = TensogramStore(path, message_index=0)
    assert not store.is_writeable() and not store.is_erasable()
    for action in (lambda: store.__setitem__("v/0", b"x"), lambda: store.__delitem__("v/0"), store.clear,
                   lambda: store.rmdir("v"), lambda: store.rename("v", "w"), lambda: store.update({"a": b""})):
        with pytest.raises(zarr.errors.ReadOnlyError, match="TensogramStore is read-only"):
            action()
    with pytest.raises(PermissionError):
        zarr.open(store, mode="r")["v"][0] = 5.0
    with pytest.raises(PermissionError):
        zarr.open(store, mode="r+")["v"][0] = 5.0
    assert np.array_equal(zarr.open(store, mode="r")["v"][...], np.ones(3))


def test_unknown_keys_raise_key_error_without_decoding(tmp_path, calls):
    path = write_tgm(tmp_path / "u.tgm", [({"base": [{"name": "v"}]}, [(desc([3, 2], "float64"), np.ones((3, 2)))])])
    store = TensogramStore(path, message_index=0)
    for key in ["nope", "v/1.0", "v/0", "v/0.0.0", "v/00.0", "v/-1.0", "v/a.0", "v/.zgroup", "x/0.0", "", "/v/0.0"]:
        with pytest.raises(KeyError):
            store[key]
        assert key not in store
    assert "v/0.0" in store and store.get("v/9.9") is None
    assert store.getsize("v/0.0") == 48 and store.getsize("v") == 48 + len(store["v/.zarray"]) + len(store["v/.zattrs"])
    assert not payload_calls(calls)


def test_closed_store_raises_value_error(tmp_path):
    path = write_tgm(tmp_path / "c.tgm", [({"base": [{"name": "v"}]}, [(desc([3], "float64"), np.ones(3))])])
    with TensogramStore(path, message_index=0) as store:
        assert not store.closed
    assert store.closed
    for action in (lambda: store["v/0"], lambda: store[".zgroup"], lambda: list(store), lambda: len(store),
                   lambda: "v/0" in store, lambda: store.listdir(""), lambda: store.getsize("v")):
        with pytest.raises(ValueError, match="closed TensogramStore"):
            action()
    store.close()  # closing twice is fine


def test_bad_sources(tmp_path):
    with pytest.raises(OSError):
        TensogramStore(tmp_path / "missing.tgm")
    junk = tmp_path / "junk.tgm"
    junk.write_bytes(b"this is not a tensogram file" * 10)
    with pytest.raises(ValueError, match="^FramingError: no Tensogram message found in"):
        TensogramStore(junk)
    empty = tmp_path / "empty.tgm"
    empty.write_bytes(b"")
    assert list(TensogramStore(empty)) == [".zgroup", ".zattrs", ".zmetadata"]
    truncated = tmp_path / "cut.tgm"
    good = write_tgm(tmp_path / "g.tgm", [({"base": [{"name": "v"}]}, [(desc([3], "float64"), np.ones(3))])])
    truncated.write_bytes(Path(good).read_bytes()[:-20])
    with pytest.raises(ValueError, match="FramingError"):
        TensogramStore(truncated)
    for bad in (-1, True, 1.5):
        with pytest.raises((ValueError, TypeError)):
            TensogramStore(good, block_bytes=bad)
    with pytest.raises(TypeError, match="message_index must be an integer"):
        TensogramStore(good, message_index="0")


def test_pickled_store_reopens_the_file(tmp_path):
    path = write_tgm(tmp_path / "p.tgm", [({"base": [{"name": "v"}]}, [(desc([4], "int32"), np.arange(4, dtype=np.int32))])])
    store = TensogramStore(path, message_index=0, block_bytes=8)
    copy = pickle.loads(pickle.dumps(store))
    assert copy is not store and list(copy) == list(store)
    assert zarr.open(copy, mode="r")["v"][...].tolist() == [0, 1, 2, 3]


def test_docs_page_examples_run(tmp_path, monkeypatch):
    """Every ```python block of docs/zarr.md runs, in order, in one namespace."""
    monkeypatch.chdir(tmp_path)
    blocks = python_blocks((DOCS / "zarr.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 3
    namespace: dict = {"__name__": "docs_zarr_md"}
    for number, (line, code) in enumerate(blocks, start=1):
        exec(compile(code, f"zarr.md:block{number}(line {line})", "exec"), namespace)


def test_bfloat16_decoded_by_a_numpy_extension_keeps_its_bits(tmp_path, monkeypatch):
    """Where ml_dtypes is installed the module decodes bfloat16 to a 2-byte
    non-integer dtype; the store still serves the uint16 bit patterns.  Here the
    decoder's result is replaced by a 2-byte void view of the same bytes."""
    bits = np.array([0x3F80, 0xC000, 0x0001], dtype=np.uint16)
    path = write_tgm(tmp_path / "bf.tgm", [({"base": [{"name": "b"}]}, [(desc([3], "bfloat16"), bits)])])

    class ExtensionDecoder(CountingFile):
        def file_decode_object(self, *args, **kwargs):
            result = dict(self._real.file_decode_object(*args, **kwargs))
            result["data"] = np.asarray(result["data"]).view(np.dtype("V2"))
            return result

    real_open = _naming.open_source
    monkeypatch.setattr(_naming, "open_source", lambda *a, **k: ExtensionDecoder(real_open(*a, **k), []))
    got = zarr.open(TensogramStore(path, message_index=0), mode="r")["b"][...]
    assert got.dtype == np.uint16 and got.tolist() == bits.tolist()
