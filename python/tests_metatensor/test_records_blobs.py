"""What safetensors cannot do: struct tensors as numpy structured arrays over
the file, blob tensors (strings, ragged lists) as lazy sequences. Every
view is compared with the library's own logical value of the tensor (what
`metatensor dump` prints, computed in C++ independently of the views)."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from tensogram import _metatensor
from tensogram import metatensor as mt

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def scalar(keyword: str, json_type: str = "number") -> dict:
    return {"type": json_type, f"TypeDef:{keyword}": True}


def struct_of(**fields: dict) -> dict:
    return {"type": "object", "TypeDef:Struct": True, "properties": fields, "required": list(fields)}


def array_of(item: dict, **bounds: int) -> dict:
    return {"type": "array", "items": item, **bounds}


STRING = {"type": "string", "TypeDef:String": True}
SCHEMA = {
    "$schema": DIALECT,
    "type": "object",
    "properties": {
        # id, then a bool and an f64 (padding before mass), a fixed array, a nested record.
        "particles": array_of(struct_of(
            id=scalar("Int32", "integer"), flag=scalar("Bool", "boolean"), mass=scalar("Float64"),
            vel=array_of(scalar("Float32"), minItems=3, maxItems=3),
            pos=struct_of(x=scalar("Float32"), y=scalar("Float32")))),
        "tagged": array_of(struct_of(
            id=scalar("Uint16", "integer"), label=STRING,
            pair={"type": "array", "prefixItems": [scalar("Int32", "integer"), scalar("Float32")], "items": False},
            hist={"type": "array", "TypeDef:List": True,
                  "items": struct_of(t=scalar("Float32"), n=scalar("Int16", "integer"))})),
        "names": array_of(STRING),
        "grid": array_of(array_of(STRING)),
        "rows": array_of({"type": "array", "TypeDef:List": True, "items": scalar("Float32")}),
        "dense": array_of(scalar("Int64", "integer")),
    },
    "required": ["particles", "names", "rows"],
}


def values(rng: np.random.Generator) -> dict:
    n = 7
    return {
        "particles": [{"id": int(i) - 3, "flag": bool(i % 2), "mass": float(rng.standard_normal()),
                       "vel": [float(v) for v in rng.standard_normal(3).astype(np.float32)],
                       "pos": {"x": float(np.float32(i) / 4), "y": -float(i)}} for i in range(n)],
        "tagged": [{"id": 1, "label": "ünïcode", "pair": [-1, 0.5], "hist": [{"t": 0.25, "n": -2}]},
                   {"id": 65535, "label": "", "pair": [7, -2.0], "hist": []},
                   {"id": 2, "label": "x" * 100, "pair": [0, 1.0],
                    "hist": [{"t": float(k), "n": k} for k in range(5)]}],
        "names": ["alpha", "", "γάμμα", "d" * 1000, "e"],
        "grid": [["a", "bb", "ccc"], ["", "é", "🙂"]],
        "rows": [[float(v) for v in rng.standard_normal(k).astype(np.float32)] for k in (3, 0, 1, 17)],
        "dense": [1, 2, 3],
    }


@pytest.fixture
def written(tmp_path, rng):
    vals = values(rng)
    path = tmp_path / "rich.safetensors"
    path.write_bytes(_metatensor.serialize_json(json.dumps(SCHEMA), json.dumps(vals), {"who": "test"}))
    return path, vals


def logical(f: mt.safe_open, name: str):
    return json.loads(f._file.logical_value(name))


def header_offsets(path) -> dict:
    image = path.read_bytes()
    (n,) = struct.unpack_from("<Q", image, 0)
    header = json.loads(image[8:8 + n])
    return {k: 8 + n + v["data_offsets"][0] for k, v in header.items() if k != "__metadata__"}


def address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def test_keys_are_the_logical_tensors(written):
    path, vals = written
    with mt.safe_open(path, framework="np") as f:
        assert f.keys() == sorted(vals)
        assert f.metadata() == {"who": "test"}
        assert json.loads(f.schema()) == SCHEMA
        assert f.get_slice("particles").get_dtype() == "struct"
        assert f.get_slice("names").get_dtype() == "string"
        assert f.get_slice("rows").get_dtype() == "list"
        assert f.get_slice("grid").get_shape() == [2, 3]


def test_struct_tensor_is_a_structured_array_over_the_file(written):
    path, vals = written
    with mt.safe_open(path, framework="np") as f:
        recs = f.get_tensor("particles")
        want = logical(f, "particles")
        assert want == vals["particles"]  # the library reads back what it wrote
        assert recs.shape == (len(want),)
        assert recs.dtype.names == ("id", "flag", "mass", "vel", "pos")
        assert recs.dtype.fields["mass"][1] == 8  # C layout: padded after id and flag
        np.testing.assert_array_equal(recs["id"], [r["id"] for r in want])
        np.testing.assert_array_equal(recs["flag"], [r["flag"] for r in want])
        np.testing.assert_array_equal(recs["mass"], [r["mass"] for r in want])
        np.testing.assert_array_equal(recs["vel"], np.array([r["vel"] for r in want], np.float32))
        np.testing.assert_array_equal(recs["pos"]["x"], np.array([r["pos"]["x"] for r in want], np.float32))
        assert recs["vel"].shape == (len(want), 3)
        # Zero copy: the records are the primary tensor's bytes in the file.
        assert not recs.flags.writeable
        assert np.shares_memory(recs["mass"], recs)
        offsets = header_offsets(path)
        dense = f.get_tensor("dense")
        assert address(dense) - address(recs) == offsets["dense"] - offsets["particles"]


def test_struct_with_string_list_and_tuple_fields(written):
    path, vals = written
    with mt.safe_open(path, framework="np") as f:
        recs = f.get_tensor("tagged")
        want = logical(f, "tagged")
        assert want == vals["tagged"]
        assert recs["id"].tolist() == [r["id"] for r in want]
        # Tuples are records with fields "0", "1", ...
        assert recs["pair"]["0"].tolist() == [r["pair"][0] for r in want]
        assert recs["pair"]["1"].tolist() == [r["pair"][1] for r in want]
        # The structured array holds the BlobRefs of String/List fields ...
        assert recs["label"].dtype.names == ("offset", "length")
        assert recs["label"]["length"].tolist() == [len(r["label"].encode()) for r in want]
        # ... and get_blob_field reads the blobs.
        labels = f.get_blob_field("tagged", "label")
        assert isinstance(labels, mt.BlobSequence) and labels.kind == "string"
        assert labels.shape == (3,) and list(labels) == [r["label"] for r in want]
        hist = f.get_blob_field("tagged", "hist")
        assert hist.kind == "list"
        for got, r in zip(hist, want):
            assert got.dtype.names == ("t", "n") and not got.flags.writeable
            assert got["t"].tolist() == [h["t"] for h in r["hist"]]
            assert got["n"].tolist() == [h["n"] for h in r["hist"]]
        with pytest.raises(IndexError, match="MT_BAD_RANGE"):
            labels[3]
        with pytest.raises(ValueError, match="structured array"):
            labels.refs()


def test_get_blob_field_misuse(written):
    path, _ = written
    with mt.safe_open(path, framework="np") as f:
        with pytest.raises(ValueError, match="not a String or List field"):
            f.get_blob_field("tagged", "id")
        with pytest.raises(ValueError):
            f.get_blob_field("tagged", "nope")
        with pytest.raises(ValueError):
            f.get_blob_field("names", "x")  # not a struct tensor
        with pytest.raises(mt.TensorNotFoundError):
            f.get_blob_field("missing", "label")


def test_strings_are_a_lazy_sequence(written):
    path, vals = written
    with mt.safe_open(path, framework="np") as f:
        names = f.get_tensor("names")
        assert isinstance(names, mt.BlobSequence)
        assert names.kind == "string"
        assert len(names) == len(vals["names"])
        assert names.shape == (len(vals["names"]),)
        assert list(names) == logical(f, "names") == vals["names"]
        assert names[-1] == vals["names"][-1]
        assert names[3] == "d" * 1000
        refs = names.refs()
        assert refs.shape == (5, 2) and not refs.flags.writeable
        assert refs[:, 1].tolist() == [len(s.encode()) for s in vals["names"]]
        with pytest.raises(IndexError, match="MT_BAD_RANGE"):
            names[5]
        with pytest.raises(IndexError, match="MT_BAD_RANGE"):
            names[-6]
        with pytest.raises(TypeError):
            names["a"]


def test_two_dimensional_strings(written):
    path, vals = written
    with mt.safe_open(path, framework="np") as f:
        grid = f.get_tensor("grid")
        assert grid.shape == (2, 3)
        assert len(grid) == 6
        assert grid[1, 2] == vals["grid"][1][2] == "🙂"
        assert grid[-1, -1] == "🙂"
        assert grid[4] == vals["grid"][1][1]  # flat C-order index
        assert [list(grid[i, j] for j in range(3)) for i in range(2)] == logical(f, "grid")
        with pytest.raises(IndexError, match="MT_BAD_RANGE"):
            grid[0, 3]
        with pytest.raises(IndexError, match="MT_BAD_RANGE"):
            grid[0, 0, 0]


def test_ragged_lists_are_arrays_over_the_heap(written):
    path, vals = written
    with mt.safe_open(path, framework="np") as f:
        rows = f.get_tensor("rows")
        assert rows.kind == "list"
        want = logical(f, "rows")
        assert [r.tolist() for r in rows] == want == vals["rows"]
        assert [r.shape for r in rows] == [(3,), (0,), (1,), (17,)]
        row = rows[3]
        assert row.dtype == np.float32 and not row.flags.writeable
        assert address(rows[3]) == address(row)  # the same heap bytes every time
        offsets = header_offsets(path)
        assert address(row) - address(rows[0]) == rows.refs()[3, 0] - rows.refs()[0, 0]
        assert "rows#heap" in offsets


def test_load_returns_every_kind(written):
    path, vals = written
    loaded = mt.load_file(path)
    assert sorted(loaded) == sorted(vals)
    assert list(loaded["names"]) == vals["names"]
    assert loaded["particles"]["id"].tolist() == [r["id"] for r in vals["particles"]]
    # The sequences and arrays keep the file alive on their own.
    np.testing.assert_array_equal(loaded["rows"][0], vals["rows"][0])


def test_out_of_bounds_blob_ref_is_an_error_not_a_wild_read(written):
    path, _ = written
    image = bytearray(path.read_bytes())
    at = header_offsets(path)["names"]  # BlobRef 0 of "names": offset, length
    struct.pack_into("<QQ", image, at, 1 << 40, 4)
    with pytest.raises(mt.MetatensorError) as excinfo:
        mt.load(bytes(image))
    assert excinfo.value.code == "MT_BLOB_BOUNDS"
    assert "names" in str(excinfo.value)


def test_invalid_utf8_in_a_string_is_reported_at_access(written):
    path, vals = written
    image = bytearray(path.read_bytes())
    (n,) = struct.unpack_from("<Q", image, 0)
    heap = json.loads(image[8:8 + n])["names#heap"]["data_offsets"][0] + 8 + n
    offset, _ = struct.unpack_from("<QQ", image, header_offsets(path)["names"])
    image[heap + offset] = 0xFF  # first byte of "alpha"
    names = mt.load(bytes(image))["names"]
    assert names[2] == vals["names"][2]
    with pytest.raises(mt.MetatensorError) as excinfo:
        names[0]
    assert excinfo.value.code == "MT_UTF8"


def touch(value) -> None:
    """Reads every byte a view exposes."""
    if isinstance(value, mt.BlobSequence):
        for element in value:
            touch(element)
    elif isinstance(value, np.ndarray):
        value.tobytes()
    else:
        assert isinstance(value, str)


def test_corrupted_rich_files_never_crash(written, rng):
    """Random byte flips anywhere (header, records, BlobRefs, heaps): each
    image either opens, and every element reads, or raises with a format
    error name."""
    path, _ = written
    image = path.read_bytes()
    outcomes = {"opened": 0, "refused": 0}
    for _ in range(400):
        bad = bytearray(image)
        for pos in rng.integers(0, len(image), size=int(rng.integers(1, 4))):
            bad[pos] = int(rng.integers(0, 256))
        try:
            tensors = mt.load(bytes(bad))
        except mt.MetatensorError as e:
            assert e.code is not None and e.code in str(e)
            outcomes["refused"] += 1
            continue
        outcomes["opened"] += 1
        for value in tensors.values():
            try:
                touch(value)
            except mt.MetatensorError as e:
                assert e.code == "MT_UTF8"  # the one check left to element access
    assert outcomes["opened"] and outcomes["refused"], outcomes
