"""Spec 08 §4-§9 parity of the module: compute_hash inputs (§4), native_byte_order=False (§5),
Metadata/descriptor key order and reprs (§6), eager open errors (§7), the StreamingEncoder base
rule we keep as an error (§8, docs/python.md) and the doctor() records (§9)."""

import sys

import numpy as np
import pytest

import tensogram

DESC = {"type": "ntensor", "shape": [2], "dtype": "float32"}


def _encode(meta, n=1, **extra_desc):
    return tensogram.encode(meta, [({**DESC, **extra_desc}, np.ones(2, np.float32)) for _ in range(n)])


# ---- §4 compute_hash --------------------------------------------------------------------------

def test_compute_hash_takes_bytes_and_bytearray():
    assert tensogram.compute_hash(b"hello world") == "d447b1ea40e6988b"
    assert tensogram.compute_hash(bytearray(b"hello world")) == "d447b1ea40e6988b"


@pytest.mark.parametrize("data, qualname", [
    ("text", "str"), (memoryview(b"ab"), "memoryview"), (np.zeros(2, np.uint8), "ndarray"), (1, "int"),
])
def test_compute_hash_rejects_other_inputs(data, qualname):
    with pytest.raises(TypeError) as e:
        tensogram.compute_hash(data)
    assert str(e.value) == f"argument 'data': '{qualname}' object is not an instance of 'bytes | bytearray'"


def test_compute_hash_none_input_and_algo_types():
    with pytest.raises(TypeError, match=r"^argument 'data': 'None' is not an instance of 'bytes \| bytearray'$"):
        tensogram.compute_hash(None)
    with pytest.raises(TypeError, match=r"^argument 'algo': 'None' is not an instance of 'str'$"):
        tensogram.compute_hash(b"x", algo=None)


def test_compute_hash_algo_none_still_gives_xxh3():
    assert tensogram.compute_hash(b"hello world", algo="none") == tensogram.compute_hash(b"hello world")


@pytest.mark.parametrize("algo", ["XXH3", "md5", ""])
def test_compute_hash_unknown_algo(algo):
    with pytest.raises(ValueError) as e:
        tensogram.compute_hash(b"x", algo=algo)
    assert type(e.value) is ValueError
    assert str(e.value) == f'MetadataError: unknown hash type: {algo}; expected "xxh3" or "none"'


def test_encode_hash_option_texts():
    pairs = [(DESC, np.ones(2, np.float32))]
    with pytest.raises(ValueError) as e:
        tensogram.encode({}, pairs, hash="XXH3")
    assert str(e.value) == 'metadata error: unknown hash type: XXH3; expected "xxh3" or "none"'
    with pytest.raises(TypeError, match=r"^argument 'hash': 'int' object is not an instance of 'str'$"):
        tensogram.encode({}, pairs, hash=1)
    assert tensogram.decode(tensogram.encode({}, pairs, hash="none")).objects[0][1].tolist() == [1.0, 1.0]


# ---- §5 byte order on decode ------------------------------------------------------------------

@pytest.mark.parametrize("stored", ["big", "little"])
def test_native_byte_order_false_keeps_wire_bytes_under_the_native_dtype(stored):
    values = np.array([1.5, -2.0, 3.25], dtype="f8")
    wire = values.astype(">f8" if stored == "big" else "<f8")
    msg = tensogram.encode({}, [({"type": "ntensor", "shape": [3], "dtype": "float64", "byte_order": stored},
                                 wire.tobytes())])
    d, native = tensogram.decode(msg).objects[0]
    assert d.byte_order == stored and native.dtype.isnative and native.tolist() == values.tolist()
    d, raw = tensogram.decode(msg, native_byte_order=False).objects[0]
    assert d.byte_order == stored                     # the declared order, unchanged
    assert raw.dtype == np.dtype("float64") and raw.dtype.isnative
    assert raw.tobytes() == wire.tobytes()            # no swap
    host = "little" if sys.byteorder == "little" else "big"
    assert (raw.tolist() == values.tolist()) == (stored == host)
    for arr in (tensogram.decode_object(msg, 0, native_byte_order=False)[2],
                tensogram.decode_range(msg, 0, [(0, 3)], join=True, native_byte_order=False)):
        assert arr.dtype.isnative and arr.tobytes() == wire.tobytes()


# ---- §6 Metadata ordering -----------------------------------------------------------------------

def test_key_order_of_the_spec_example():
    msg = _encode({"base": [{"name": "t", "mars": {"param": 1}}, {"level": 500, "name": "u"}],
                   "_extra_": {"source": "x", "name": "y"}}, n=2)
    meta = tensogram.decode_metadata(msg)
    assert list(meta) == ["mars", "name", "level", "source"]
    assert meta.keys() == list(meta) and len(meta) == 4
    assert meta["name"] == "t"
    assert [k for k, _ in meta.items()] == list(meta) and meta.values()[1] == "t"


def test_first_level_maps_sorted_nested_maps_in_wire_order():
    msg = _encode({"base": [{"zeta": 1, "Alpha": 2, "mars": {"param": 1, "class": 2, "date": 3}}],
                   "_extra_": {"b": 1, "B": 2, "a": 3}}, zstd_level=3, compression="zstd")
    meta, [(desc, _)] = tensogram.decode(msg)
    assert list(meta.base[0]) == ["Alpha", "_reserved_", "mars", "zeta"]
    assert list(meta.base[0]["mars"]) == ["date", "class", "param"]      # canonical CBOR: shorter first
    assert list(meta.base[0]["_reserved_"]["tensor"]) == ["ndim", "dtype", "shape", "strides"]
    assert list(meta.extra) == ["B", "a", "b"]
    assert list(meta.reserved) == sorted(meta.reserved)
    assert list(desc.params) == sorted(desc.params)
    assert list(meta) == ["Alpha", "mars", "zeta", "B", "a", "b"]


def test_reprs():
    meta = tensogram.decode_metadata(_encode({"_extra_": {"source": "x", "na\"me": "y", "tab\t": 1}}))
    assert repr(meta) == 'Metadata(version=3, base_len=1, extra_keys=["na\\"me", "source", "tab\\t"])'
    assert repr(tensogram.decode_metadata(_encode({}))) == "Metadata(version=3, base_len=1, extra_keys=[])"
    desc = tensogram.decode(_encode({})).objects[0][0]
    assert repr(desc) == ("DataObjectDescriptor(type='ntensor', shape=[2], dtype='float32', "
                          "encoding='none', compression='none')")


def test_non_str_keys_are_type_errors():
    meta = tensogram.decode_metadata(_encode({"base": [{"a": 1}]}))
    for call in (lambda: meta[1], lambda: 1 in meta, lambda: meta.get(1)):
        with pytest.raises(TypeError, match=r"^argument 'key': 'int' object is not an instance of 'str'$"):
            call()
    with pytest.raises(KeyError) as e:
        meta["missing"]
    assert str(e.value) == "'missing'"


# ---- §7 opening ---------------------------------------------------------------------------------

def test_open_missing_local_path_is_a_plain_oserror(tmp_path):
    path = str(tmp_path / "absent.tgm")
    with pytest.raises(OSError) as e:
        tensogram.TensogramFile.open(path)
    assert type(e.value) is OSError and e.value.errno is None
    assert str(e.value) == f"file not found: {path}"
    with pytest.raises(OSError) as e:
        tensogram.TensogramFile.open("file:///x")       # not a remote scheme: a local path, literally
    assert str(e.value) == "file not found: file:///x"


def test_open_reads_nothing(tmp_path):
    garbage = tmp_path / "garbage.tgm"
    garbage.write_bytes(b"not a tensogram file at all" * 10)
    f = tensogram.TensogramFile.open(str(garbage))
    assert repr(f) == f"TensogramFile(source='{garbage}')"
    assert len(f) == 0
    tensogram.TensogramFile.open(str(tmp_path))                 # a directory opens too


@pytest.mark.parametrize("source, text", [
    ("data.tgm", "invalid URL 'data.tgm': relative URL without a base"),
    ("https://", "invalid URL 'https://': empty host"),
    ("http://host:99999/x.tgm", "invalid URL 'http://host:99999/x.tgm': invalid port number"),
    ("http://host:ab/x.tgm", "invalid URL 'http://host:ab/x.tgm': invalid port number"),
    ("ftp://host/x.tgm", "cannot open 'ftp://host/x.tgm': Generic URL error: Unable to recognise URL "
                         "\"ftp://host/x.tgm\""),
])
def test_remote_open_checks_the_url_at_open(source, text):
    with pytest.raises(OSError) as e:
        tensogram.TensogramFile.open_remote(source)
    assert type(e.value) is OSError and str(e.value) == "RemoteError: " + text


def test_remote_open_of_a_remote_scheme_through_open():
    with pytest.raises(OSError, match=r"^RemoteError: invalid URL 'HTTPS://': empty host$"):
        tensogram.TensogramFile.open("HTTPS://")


# ---- §8 StreamingEncoder base entries (kept as an error, docs/python.md) --------------------------

def test_streaming_encoder_refuses_to_drop_base_entries():
    enc = tensogram.StreamingEncoder({"base": [{"a": 1}, {"b": 2}]})
    enc.write_object(DESC, np.ones(2, np.float32))
    with pytest.raises(ValueError, match=r"^MetadataError: metadata base has 2 entries but only 1 "):
        enc.finish()


# ---- §9 doctor() --------------------------------------------------------------------------------

def test_doctor_records():
    report = tensogram.doctor()
    assert list(report) == ["build", "features", "self_test"]
    assert list(report["build"]) == ["version", "wire_version", "target", "profile"]
    assert report["build"]["wire_version"] == 3 and report["build"]["profile"] in ("release", "debug")
    names = [f["name"] for f in report["features"]]
    assert names == ["szip", "szip-pure", "zstd", "zstd-pure", "lz4", "blosc2", "zfp", "sz3", "threads",
                     "remote", "mmap", "async"]
    for f in report["features"]:
        assert f["kind"] in ("compression", "threading", "io")
        if f["state"] == "off":
            assert list(f) == ["name", "kind", "state"]
        else:
            assert f["state"] == "on"
            assert list(f) == ["name", "kind", "state", "backend", "linkage", "version"]
            assert f["linkage"] in ("ffi", "pure-rust")
            assert f["version"] is None or isinstance(f["version"], str)
    assert len(report["self_test"]) == 10
    for row in report["self_test"]:
        assert row["outcome"] in ("ok", "failed", "skipped")
        expected = {"ok": ["label", "outcome"], "failed": ["label", "outcome", "error"],
                    "skipped": ["label", "outcome", "reason"]}[row["outcome"]]
        assert list(row) == expected
    assert tensogram.doctor() is not report        # run afresh on each call
