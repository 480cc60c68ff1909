"""Reading metatensor files through a newer compatible schema
(safe_open(..., schema=...), docs/metatensor-python.md "Reading with a newer
schema"): the reader's dtypes, views when the layout is unchanged, converted
copies otherwise, and MT_SCHEMA_INCOMPATIBLE naming the schema node."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import numpy as np
import pytest

from tensogram import _metatensor
from tensogram import metatensor as mt

DOC = Path(__file__).resolve().parents[2] / "docs" / "metatensor-python.md"


def scalar(keyword: str, type_: str = "number") -> dict:
    return {"type": type_, keyword: True}


OLD = {
    "type": "object",
    "properties": {
        "points": {
            "type": "array",
            "items": {
                "type": "object",
                "TypeDef:Struct": True,
                "properties": {"x": scalar("TypeDef:Float32"), "id": scalar("TypeDef:Uint16", "integer")},
                "required": ["x", "id"],
            },
        },
        "counts": {"type": "array", "items": scalar("TypeDef:Int16", "integer")},
        "names": {"type": "array", "items": {"type": "string", "TypeDef:String": True}},
    },
}


def write(path: Path, rng: np.random.Generator) -> dict:
    n = 5
    value = {
        "points": [{"x": float(np.float32(rng.standard_normal())), "id": int(rng.integers(0, 65536))}
                   for _ in range(n)],
        "counts": [int(v) for v in rng.integers(-32768, 32768, size=n)],
        "names": ["alpha", "", "\u00e9t\u00e9"],
    }
    path.write_bytes(_metatensor.serialize_json(json.dumps(OLD), json.dumps(value), {}))
    return value


def test_identical_layout_gives_the_files_own_views(tmp_path, rng):
    value = write(tmp_path / "old.mt", rng)
    reader = copy.deepcopy(OLD)
    reader["properties"]["points"]["description"] = "annotations do not change the layout"
    with mt.safe_open(tmp_path / "old.mt", framework="np") as plain:
        before = plain.get_tensor("points")
        with mt.safe_open(tmp_path / "old.mt", framework="np", schema=reader) as f:
            assert f.is_view("points") and f.is_view("counts")
            pts = f.get_tensor("points")
            assert pts.dtype == before.dtype
            assert not pts.flags.writeable
            np.testing.assert_array_equal(pts["id"], [p["id"] for p in value["points"]])
            assert json.loads(f.schema()) == reader


def test_added_widened_reordered_fields_are_converted_copies(tmp_path, rng):
    value = write(tmp_path / "old.mt", rng)
    reader = copy.deepcopy(OLD)
    rec = reader["properties"]["points"]["items"]
    rec["properties"]["x"] = scalar("TypeDef:Float64")  # widened
    rec["properties"]["id"] = scalar("TypeDef:Int32", "integer")  # U16 -> I32
    rec["properties"]["w"] = dict(scalar("TypeDef:Float32"), default=0.25)  # added with a default
    rec["required"] = ["w", "id", "x"]  # reordered
    reader["properties"]["counts"]["items"] = scalar("TypeDef:Float64")  # I16 -> F64
    with mt.safe_open(tmp_path / "old.mt", framework="np", schema=json.dumps(reader)) as f:
        assert not f.is_view("points") and not f.is_view("counts")
        pts = f.get_tensor("points")
        assert pts.dtype.names == ("w", "id", "x")
        assert pts.dtype["x"] == np.float64 and pts.dtype["id"] == np.int32 and pts.dtype["w"] == np.float32
        np.testing.assert_array_equal(pts["x"], [p["x"] for p in value["points"]])
        np.testing.assert_array_equal(pts["id"], [p["id"] for p in value["points"]])
        np.testing.assert_array_equal(pts["w"], np.full(len(value["points"]), 0.25, np.float32))
        counts = f.get_tensor("counts")
        assert counts.dtype == np.float64
        np.testing.assert_array_equal(counts, value["counts"])
        part = f.get_slice("counts")
        assert part.get_dtype() == "F64"
        np.testing.assert_array_equal(part[1:3], np.asarray(value["counts"][1:3], np.float64))
        assert f.get_tensor("names")[2] == value["names"][2]  # unchanged tensor: still a view
    # The converted arrays outlive the file.
    assert pts["w"][0] == np.float32(0.25)


def test_removed_tensors_are_not_exposed_and_blob_kinds_convert(tmp_path, rng):
    value = write(tmp_path / "old.mt", rng)
    reader = copy.deepcopy(OLD)
    del reader["properties"]["counts"]
    reader["properties"]["names"]["items"] = {"type": "array", "TypeDef:List": True,
                                              "items": scalar("TypeDef:Uint8", "integer")}
    with mt.safe_open(tmp_path / "old.mt", framework="np", schema=reader) as f:
        assert f.keys() == ["names", "points"]
        with pytest.raises(mt.TensorNotFoundError):
            f.get_tensor("counts")
        names = f.get_tensor("names")
        assert names.kind == "list"
        assert bytes(names[2]) == value["names"][2].encode()
        assert f.is_view("names")  # String -> List of Uint8 keeps the bytes


def test_incompatible_schema_names_the_node(tmp_path, rng):
    write(tmp_path / "old.mt", rng)
    reader = copy.deepcopy(OLD)
    reader["properties"]["points"]["items"]["properties"]["x"] = scalar("TypeDef:Float16")
    with pytest.raises(mt.MetatensorError) as err:
        mt.safe_open(tmp_path / "old.mt", framework="np", schema=reader)
    assert err.value.code == "MT_SCHEMA_INCOMPATIBLE"
    assert "/properties/points/items/properties/x: points.x: F32 -> F16 (not a widening)" in str(err.value)
    with pytest.raises(mt.MetatensorError) as err:
        mt.safe_open(tmp_path / "old.mt", framework="np", schema="{not json")
    assert err.value.code == "MT_SCHEMA_JSON"
    with pytest.raises(FileNotFoundError):
        mt.safe_open(tmp_path / "missing.mt", framework="np", schema=OLD)


def test_the_docs_example_runs(tmp_path, rng, monkeypatch):
    text = DOC.read_text()
    section = text[text.index("## Reading with a newer schema"):]
    code = re.findall(r"```py\n(.*?)```", section, flags=re.S)
    assert code, "docs/metatensor-python.md has no example under 'Reading with a newer schema'"
    write(tmp_path / "points.mt", rng)
    monkeypatch.chdir(tmp_path)
    exec(code[0], {})
