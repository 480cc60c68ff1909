"""Writing records and blobs from Python (`save`/`save_file` with structured arrays, strings,
bytes and ragged arrays; the schema helpers). Files are compared byte for byte with the C++
writer: the `metatensor from-npy` CLI for what .npy files can hold, the library's JSON writer
(`set_logical_value`) for the rest; and read back through the views."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tensogram import _metatensor
from tensogram import metatensor as mt


def cli() -> str:
    path = os.environ.get("METATENSOR_CLI") or shutil.which("metatensor")
    if not path or not Path(path).exists():
        pytest.skip("the metatensor CLI is not available (METATENSOR_CLI)")
    return path


def reference_image(schema: dict, logical: dict, metadata: dict | None = None) -> bytes:
    """The C++ writer's file for a schema and its logical value (JSON)."""
    return _metatensor.serialize_json(json.dumps(schema), json.dumps(logical), metadata or {})


VEC = np.dtype([("x", "<f4"), ("y", "<f4")])
PARTICLE = np.dtype([
    ("id", "<u4"), ("flag", "?"), ("mass", ">f8"), ("vel", "<f4", (3,)), ("pos", VEC),
    ("name", "<U8"), ("code", "S4"), ("m", "<i2", (2, 2)),
])


def particles(rng: np.random.Generator, n: int = 5) -> np.ndarray:
    a = np.zeros(n, PARTICLE)
    a["id"] = np.arange(n) * 7
    a["flag"] = np.arange(n) % 2 == 0
    a["mass"] = rng.standard_normal(n)
    a["vel"] = rng.standard_normal((n, 3)).astype(np.float32)
    a["pos"]["x"] = np.arange(n) / 4
    a["pos"]["y"] = -np.arange(n)
    a["name"] = ["alpha", "", "γάμμα", "d" * 8, "e"][:n]
    a["code"] = [b"ab", b"", b"wxyz", b"q", b"z"][:n]
    a["m"] = np.arange(n * 4).reshape(n, 2, 2)
    return a


# ---- schemas from numpy dtypes ---------------------------------------------------------------


def test_schema_from_dtype_records_nested_and_fixed_arrays():
    s = mt.schema_from_dtype(PARTICLE)
    assert s["TypeDef:Struct"] is True and s["required"] == list(PARTICLE.names)
    assert s["properties"]["vel"] == {"type": "array", "minItems": 3, "maxItems": 3,
                                      "items": {"type": "number", "TypeDef:Float32": True}}
    assert s["properties"]["pos"]["required"] == ["x", "y"]
    assert s["properties"]["name"] == mt.string() == s["properties"]["code"]
    inner = s["properties"]["m"]
    assert (inner["minItems"], inner["items"]["minItems"]) == (2, 2)
    assert inner["items"]["items"] == mt.scalar("<i2") == {"type": "integer", "TypeDef:Int16": True}
    # Compiled by the library: the C layout, not numpy's packed one.
    layout = mt.check_schema(mt.file_schema({"p": mt.tensor(s)}))["p"]
    assert layout["kind"] == "struct"
    rec = layout["numpy"]
    assert [rec.fields[n][1] for n in ("id", "flag", "mass", "vel", "pos", "name", "code", "m")] == \
        [0, 4, 8, 16, 28, 40, 56, 72]
    assert rec.itemsize == 80 and PARTICLE.itemsize != rec.itemsize


def test_scalar_schemas_cover_the_numeric_dtypes():
    expected = {"?": ("boolean", "Bool"), "i1": ("integer", "Int8"), "<u8": ("integer", "Uint64"),
                "<f2": ("number", "Float16"), "<f8": ("number", "Float64"), "<c8": ("array", "Complex64")}
    for dt, (json_type, keyword) in expected.items():
        assert mt.scalar(dt) == {"type": json_type, f"TypeDef:{keyword}": True}
    for bad in ("<c16", "O", "M8[s]"):
        with pytest.raises(TypeError):
            mt.schema_from_dtype(bad)


def test_blob_and_tensor_helpers():
    assert mt.binary() == {"type": "array", "TypeDef:List": True, "items": mt.scalar("u1")}
    assert mt.ragged("<f4")["items"] == mt.scalar("<f4")
    t = mt.tensor(mt.string(), dims=[None, 3], align=256)
    assert t["TypeDef:Align"] == 256 and "minItems" not in t and t["items"]["maxItems"] == 3
    assert mt.tuple_of("<i4", "<f4")["prefixItems"][1] == mt.scalar("<f4")
    root = mt.file_schema({"a": mt.tensor("<f4"), "b": mt.tensor(mt.string())}, required=["a"])
    kinds = {k: (v["kind"], v["required"]) for k, v in mt.check_schema(root).items()}
    assert kinds == {"a": ("flat", True), "b": ("blob", False)}
    with pytest.raises(ValueError):
        mt.fixed_array("<f4")
    with pytest.raises(ValueError):
        mt.struct({})


# ---- byte-identical with the CLI and the C++ writer --------------------------------------------


def test_records_and_strings_match_from_npy(tmp_path, rng):
    tensors = {
        "particles": particles(rng),
        "labels": np.array(["red", "green", "", "ünï"]),
        "grid": rng.standard_normal((3, 4)).astype(">f8"),  # big-endian in, little-endian out
        "raw": np.array([b"ab", b"cde"], dtype="S3"),
    }
    for name, value in tensors.items():
        np.save(tmp_path / f"{name}.npy", value)
    out = tmp_path / "cli.mt"
    subprocess.run([cli(), "from-npy", *(str(tmp_path / f"{n}.npy") for n in tensors), "-o", str(out)],
                   check=True, capture_output=True)
    mine = tmp_path / "py.mt"
    mt.save_file(tensors, mine)
    assert mine.read_bytes() == out.read_bytes()
    assert mt.save(tensors) == out.read_bytes()


def test_round_trip_equals_the_cli_dump(tmp_path, rng):
    recs = particles(rng)
    path = tmp_path / "p.mt"
    mt.save_file({"particles": recs, "names": ["a", "", "ζ"]}, path, metadata={"k": "v"})
    assert mt.validate(path).valid
    with mt.safe_open(path, framework="np") as f:
        view = f.get_tensor("particles")
        for name in ("id", "flag", "mass", "vel", "m"):
            assert np.array_equal(view[name], recs[name]), name
        assert np.array_equal(view["pos"]["x"], recs["pos"]["x"])
        assert list(f.get_blob_field("particles", "name")) == list(recs["name"])
        assert list(f.get_blob_field("particles", "code")) == [c.decode() for c in recs["code"]]
        assert list(f.get_tensor("names")) == ["a", "", "ζ"]
        assert f.metadata() == {"k": "v"}
    # The CLI's own reading of the same file.
    dump = subprocess.run([cli(), "dump", "-j", "-n", "100", str(path)], check=True, capture_output=True,
                          text=True).stdout
    assert "γάμμα" in dump and str(int(recs["id"][3])) in dump
    doc = json.loads(dump)
    text = json.dumps(doc, ensure_ascii=False)
    for value in recs["mass"]:
        assert repr(float(value)) in text or f"{float(value):.17g}" in text


def test_blobs_match_the_json_writer(rng):
    rows = [rng.standard_normal(k).astype(np.float32) for k in (3, 0, 1, 17)]
    pairs = [np.arange(2 * k, dtype=np.int16).reshape(k, 2) for k in (2, 0, 3)]
    values = {
        "names": ["alpha", "", "γάμμα", "d" * 1000],
        "grid": [["a", "bb", "ccc"], ["", "é", "🙂"]],
        "blobs": [b"\x00\x01\xff", b"", b"xyz"],
        "rows": rows,
        "pairs": pairs,
        "one": "scalar string",
    }
    image = mt.save(values)
    schema = mt.infer_schema(values)
    assert schema["properties"]["pairs"]["items"]["items"] == mt.fixed_array("<i2", 2)
    logical = {
        "names": values["names"], "grid": values["grid"], "one": values["one"],
        "blobs": [list(b) for b in values["blobs"]],
        "rows": [r.tolist() for r in rows],
        "pairs": [p.tolist() for p in pairs],
    }
    assert image == reference_image(schema, logical)
    back = mt.load(image)
    assert list(back["names"]) == values["names"]
    assert [back["grid"][i, j] for i in range(2) for j in range(3)] == sum(values["grid"], [])
    assert [bytes(back["blobs"][i]) for i in range(3)] == values["blobs"]
    assert all(np.array_equal(back["rows"][i], r) for i, r in enumerate(rows))
    assert all(np.array_equal(back["pairs"][i], p) for i, p in enumerate(pairs))
    assert back["one"][0] == "scalar string"


def test_records_with_string_and_list_fields_under_a_schema(rng):
    hist = np.dtype([("t", "<f4"), ("n", "<i2")])
    schema = mt.file_schema({"tagged": mt.tensor(mt.struct({
        "id": "<u2", "label": mt.string(), "pair": mt.tuple_of("<i4", "<f4"), "hist": mt.ragged(hist),
        "tags": mt.fixed_array(mt.string(), 2)}))})
    src = np.zeros(3, [("id", "<u2"), ("label", "O"), ("pair", [("0", "<i4"), ("1", "<f4")]),
                       ("hist", "O"), ("tags", "O", (2,))])
    src["id"] = [1, 65535, 2]
    src["label"] = ["ünïcode", "", "x" * 100]
    src["pair"]["0"] = [-1, 7, 0]
    src["pair"]["1"] = [0.5, -2.0, 1.0]
    hists = [np.array([(0.25, -2)], hist), np.zeros(0, hist), np.array([(k, k) for k in range(5)], hist)]
    for i, h in enumerate(hists):
        src["hist"][i] = h
    src["tags"] = [["a", "b"], ["", "c"], ["d", ""]]
    image = mt.save({"tagged": src}, schema=schema)
    logical = {"tagged": [
        {"id": int(src["id"][i]), "label": src["label"][i], "pair": [int(src["pair"]["0"][i]),
                                                                     float(src["pair"]["1"][i])],
         "hist": [{"t": float(t), "n": int(n)} for t, n in hists[i]], "tags": list(src["tags"][i])}
        for i in range(3)]}
    assert image == reference_image(schema, logical)
    with _opened(image) as f:
        assert json.loads(f.logical_value("tagged")) == logical["tagged"]
        assert list(f.blob_field("tagged", "label")) == list(src["label"])
        assert np.array_equal(f.blob_field("tagged", "hist")[2]["n"], np.arange(5))


class _opened:
    def __init__(self, image: bytes) -> None:
        self.f = _metatensor.File.from_bytes(image)

    def __enter__(self):
        return self.f

    def __exit__(self, *exc: object) -> None:
        self.f.close()


def test_flat_tensors_unchanged_and_alignment(tmp_path):
    values = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([True, False])}
    image = mt.save(values, alignment=256)
    f = _metatensor.File.from_bytes(image)
    assert np.array_equal(f.tensor("w"), values["w"])
    assert b'"metatensor.alignment":"256"' in image
    # An explicit schema casts losslessly (int32 into F64) and refuses lossy casts.
    schema = mt.file_schema({"x": mt.tensor("<f8")})
    back = mt.load(mt.save({"x": np.arange(3, dtype=np.int32)}, schema=schema))
    assert back["x"].dtype == np.float64 and back["x"].tolist() == [0.0, 1.0, 2.0]
    assert mt.load(mt.save({"x": [1.5, 2]}, schema=schema))["x"].tolist() == [1.5, 2.0]
    with pytest.raises(TypeError):
        mt.save({"x": np.arange(3, dtype=np.complex64)}, schema=schema)


# ---- bad input: typed exceptions, never a crash ------------------------------------------------


def code_of(excinfo) -> str:
    return excinfo.value.code


def test_ragged_rows_of_mismatched_dtypes():
    with pytest.raises(TypeError, match="mismatched dtypes"):
        mt.save({"r": [np.zeros(2, np.float32), np.zeros(3, np.float64)]})
    with pytest.raises(ValueError, match="first axis"):
        mt.save({"r": [np.zeros((2, 2), np.float32), np.zeros((2, 3), np.float32)]})
    schema = mt.file_schema({"r": mt.tensor(mt.ragged("<f4"))})
    with pytest.raises(TypeError, match="does not fit"):
        mt.save({"r": [np.zeros(2, np.float64)]}, schema=schema)
    with pytest.raises(TypeError):
        mt.save({"r": [np.zeros(2, np.float32), "text"]})


def test_strings_that_are_not_utf8():
    with pytest.raises(mt.MetatensorError) as e:
        mt.save({"s": ["ok", b"\xff\xfe"]}, schema=mt.file_schema({"s": mt.tensor(mt.string())}))
    assert code_of(e) == "MT_UTF8" and "element 1" in str(e.value)
    with pytest.raises(mt.MetatensorError) as e:
        mt.save({"s": ["ok", "\udc80"]})  # a lone surrogate
    assert code_of(e) == "MT_UTF8"
    recs = np.zeros(2, [("name", "S2")])
    recs["name"] = [b"ok", b"\xc3("]
    with pytest.raises(mt.MetatensorError) as e:
        mt.save({"r": recs})
    assert code_of(e) == "MT_UTF8"


def test_wrong_types():
    struct_schema = mt.file_schema({"p": mt.tensor(np.dtype([("a", "<i4"), ("b", "<f4")]))})
    with pytest.raises(TypeError, match="structured array"):
        mt.save({"p": np.zeros(3, np.int32)}, schema=struct_schema)
    with pytest.raises(TypeError, match="fields"):
        mt.save({"p": np.zeros(3, [("a", "<i4")])}, schema=struct_schema)
    with pytest.raises(TypeError, match="fit"):
        mt.save({"p": np.zeros(3, [("a", "<f8"), ("b", "<f4")])}, schema=struct_schema)
    with pytest.raises(TypeError):
        mt.save({"s": [1, "a"]}, schema=mt.file_schema({"s": mt.tensor(mt.string())}))
    with pytest.raises(TypeError, match="cannot hold"):
        mt.save({"o": np.array([object()])})
    with pytest.raises(TypeError):
        mt.save([("a", np.zeros(1))])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        mt.save({"b": [b"x"]}, schema=mt.file_schema({"b": mt.tensor(mt.ragged("<f4"))}))


def test_shape_and_tensor_set_errors():
    with pytest.raises(mt.MetatensorError) as e:
        mt.save({"g": [["a", "b"], ["c"]]})
    assert code_of(e) == "MT_SHAPE"
    with pytest.raises(mt.MetatensorError) as e:
        mt.save({"x": np.zeros(2)}, schema=mt.file_schema({"y": mt.tensor("<f8")}))
    assert code_of(e) == "MT_TENSOR_SET"
    with pytest.raises(mt.MetatensorError) as e:
        mt.save({"x": np.zeros(2)}, schema=mt.file_schema({"x": mt.tensor("<f8"), "y": mt.tensor("<f8")}))
    assert code_of(e) == "MT_TENSOR_SET"
    with pytest.raises(mt.MetatensorError) as e:
        mt.save({"x": np.zeros((2, 2))}, schema=mt.file_schema({"x": mt.tensor("<f8", dims=[2, 3])}))
    assert code_of(e) == "MT_SHAPE"
    with pytest.raises(mt.MetatensorError) as e:
        mt.save({"x": np.zeros(2)}, alignment=48)
    assert code_of(e) == "MT_ALIGNMENT_VALUE"


HOSTILE = {
    "MT_UNKNOWN_TYPEDEF": {"type": "object", "properties": {"x": {"type": "array", "items": {"TypeDef:Evil": True}}}},
    "MT_SCHEMA_DIALECT": {"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}},
                          "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}},
    "MT_SCHEMA_TYPE": {"type": "object", "properties": {"x": {"type": "object", "TypeDef:Struct": True,
                                                              "properties": {"a": {"TypeDef:Int8": True}},
                                                              "required": []}}},
    "MT_SCHEMA_NAME": {"type": "object", "properties": {"a#b": {"TypeDef:Int8": True}}},
}


@pytest.mark.parametrize("code", sorted(HOSTILE))
def test_hostile_schemas(code):
    with pytest.raises(mt.MetatensorError) as e:
        mt.save({"x": np.zeros(1, np.int8)}, schema=HOSTILE[code])
    assert code_of(e) == code
    with pytest.raises(mt.MetatensorError) as e:
        mt.check_schema(HOSTILE[code])
    assert code_of(e) == code


def test_hostile_schema_texts():
    deep = '{"type":"object","properties":{"x":' + '{"type":"array","items":' * 5000 + '{"TypeDef:Int8":true}' + \
        "}" * 5000 + "}}"
    for text in ('{"type":"object","type":"object","properties":{}}', "[1,", deep, "\xff"):
        with pytest.raises(mt.MetatensorError) as e:
            mt.save({"x": np.zeros(1, np.int8)}, schema=text)
        assert e.value.code is not None and e.value.code.startswith("MT_")
    with pytest.raises(TypeError):
        mt.save({"x": np.zeros(1)}, schema=42)  # type: ignore[arg-type]
