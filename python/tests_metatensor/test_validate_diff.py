"""`validate` and `diff`: the verdicts of `metatensor validate` and `metatensor diff`, checked
against the CLI on valid, plain and damaged files and on schema changes."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import write_safetensors
from test_gil import RELEASED, steps_per_second_beside

from tensogram import metatensor as mt


def cli() -> str:
    path = os.environ.get("METATENSOR_CLI") or shutil.which("metatensor")
    if not path or not Path(path).exists():
        pytest.skip("the metatensor CLI is not available (METATENSOR_CLI)")
    return path


def cli_validate(path: Path, deep: bool) -> dict:
    args = [cli(), "validate", "--json", *(["--deep"] if deep else []), str(path)]
    out = subprocess.run(args, capture_output=True, text=True)
    return json.loads(out.stdout)[0]


def rich_values() -> dict:
    recs = np.zeros(3, [("id", "<u4"), ("name", "U5"), ("ok", "?")])
    recs["id"] = [1, 2, 3]
    recs["name"] = ["a", "bb", "ccc"]
    return {"recs": recs, "names": ["x", "yy"], "rows": [np.arange(3, dtype=np.float32)], "w": np.ones(4)}


def header_end(image: bytes) -> int:
    return 8 + struct.unpack_from("<Q", image, 0)[0]


def damaged(image: bytes) -> dict[str, bytes]:
    """Variants of a valid file, each breaking one rule."""
    n = header_end(image)
    header = image[8:n].decode()
    out = {
        "truncated": image[:-1],
        "short": image[:5],
        "trailing": image + b"\0",
        "bad_json": image[:8] + b"[" + image[9:],
        "version": image.replace(b'"metatensor.version":"1"', b'"metatensor.version":"2"'),
        "unknown_key": image.replace(b'"metatensor.endianness"', b'"metatensor.endiannesz"'),
        "no_version": image.replace(b'"metatensor.version":"1"', b'"metatensor.versiox":"1"'),
    }
    # A BlobRef of the string tensor pointing past its heap (structural, found by full validation).
    meta = json.loads(header)
    begin = meta["names"]["data_offsets"][0]
    bad = bytearray(image)
    bad[n + begin] = 200
    out["blob_bounds"] = bytes(bad)
    # A BOOL byte of 2 inside a record (deep validation only).
    rec_begin = meta["recs"]["data_offsets"][0]
    layout = json.loads(json.loads(header)["__metadata__"]["metatensor.layout"])
    fields = layout["tensors"]["recs"]["record"]["fields"]
    ok_offset = next(f["offset"] for f in fields if f["name"] == "ok")
    bad = bytearray(image)
    bad[n + rec_begin + ok_offset] = 2
    out["bool"] = bytes(bad)
    return out


def test_valid_and_plain_files(tmp_path):
    path = tmp_path / "ok.mt"
    mt.save_file(rich_values(), path)
    r = mt.validate(path)
    assert r and (r.valid, r.format, r.level, r.code) == (True, "metatensor", "deep", None)
    assert mt.validate(path.read_bytes(), deep=False).level == "structural"
    plain = tmp_path / "plain.safetensors"
    plain.write_bytes(write_safetensors({"b": np.array([True, False])}))
    r = mt.validate(plain)
    assert (r.valid, r.format, r.level) == (True, "safetensors", "safetensors, deep")
    assert mt.validate(plain, deep=False).level == "safetensors"


def test_verdicts_match_the_cli(tmp_path):
    image = mt.save(rich_values())
    cases = damaged(image)
    cases["valid"] = image
    cases["plain"] = write_safetensors({"b": np.array([1, 2], np.uint8)})
    cases["plain_bad_bool"] = write_safetensors({"b": np.array([1, 0], np.uint8)}).replace(b'"U8"', b'"BOOL"')
    cases["plain_bad_bool"] = cases["plain_bad_bool"].replace(b"\x01\x00", b"\x02\x00")
    seen = set()
    for name, data in cases.items():
        path = tmp_path / f"{name}.safetensors"
        path.write_bytes(data)
        for deep in (False, True):
            mine = mt.validate(path, deep=deep)
            theirs = cli_validate(path, deep)
            assert mine.valid == theirs["valid"], (name, deep, mine, theirs)
            assert mine.level == theirs["level"] or not mine.valid, (name, deep)
            if mine.valid:
                assert mine.format == theirs["format"], name
            else:
                assert mine.code == theirs["error"]["code"], (name, deep, mine, theirs)
                seen.add(mine.code)
    assert {"ST_INCOMPLETE", "ST_HEADER_TOO_SMALL", "ST_HEADER_JSON", "MT_VERSION", "MT_BLOB_BOUNDS",
            "MT_BOOL"} <= seen


def test_invalid_files_raise_on_request(tmp_path):
    bad = damaged(mt.save(rich_values()))["blob_bounds"]
    r = mt.validate(bad, deep=False)
    assert not r and r.code == "MT_BLOB_BOUNDS" and r.message.startswith("MT_BLOB_BOUNDS")
    with pytest.raises(mt.MetatensorError) as e:
        mt.validate(bad, raise_on_error=True)
    assert e.value.code == "MT_BLOB_BOUNDS"
    with pytest.raises(FileNotFoundError):
        mt.validate(tmp_path / "missing.mt")
    with pytest.raises(OSError):
        mt.validate(tmp_path)
    with pytest.raises(TypeError):
        mt.validate(42)  # type: ignore[arg-type]


def test_validate_releases_the_gil(tmp_path):
    path = tmp_path / "big.mt"
    mt.save_file({"s": ["x" * 7] * 200_000, "w": np.arange(1_000_000, dtype=np.float64)}, path)
    rate = steps_per_second_beside(lambda: [mt.validate(path) for _ in range(2)])
    assert rate > RELEASED, f"validate: {rate:.0f} steps/s"


# ---- diff ---------------------------------------------------------------------------------------

PARTICLE = mt.struct({"id": "<u4", "mass": "<f4"})
OLD = mt.file_schema({"particles": mt.tensor(PARTICLE), "w": mt.tensor("<f4"), "gone": mt.tensor("<i8")})


def evolve() -> dict:
    new = json.loads(json.dumps(OLD))
    p = new["properties"]["particles"]["items"]
    p["properties"]["mass"] = mt.scalar("<f8")  # widened
    p["properties"]["tag"] = dict(mt.scalar("<u2"), default=0)  # added with a default
    p["required"].append("tag")
    del new["properties"]["gone"]
    new["required"].remove("gone")
    return new


def test_diff_classifies_changes():
    d = mt.diff(OLD, evolve())
    assert d.verdict == "convertible" and d.compatible and not d.breaking
    by_path = {c.path: c.verdict for c in d.changes}
    assert by_path["particles.mass"] == "convertible"
    assert by_path["particles.tag"] == "view-compatible"
    assert by_path["gone"] == "compatible"
    assert mt.diff(OLD, OLD).verdict == "identical layout"
    broken = json.loads(json.dumps(OLD))
    broken["properties"]["w"] = mt.tensor(mt.string())
    d = mt.diff(OLD, json.dumps(broken))
    assert d.breaking and any(c.path == "w" and c.verdict == "incompatible" for c in d.changes)


def test_diff_matches_the_cli(tmp_path):
    old_file = tmp_path / "old.mt"
    mt.save_file({"particles": np.zeros(2, [("id", "<u4"), ("mass", "<f4")]), "w": np.zeros(3, np.float32),
                  "gone": np.zeros(1, np.int64)}, old_file, schema=OLD)
    new_doc = tmp_path / "new.json"
    new_doc.write_text(json.dumps(evolve()))
    mine = mt.diff(old_file, new_doc)
    text = subprocess.run([cli(), "diff", str(old_file), str(new_doc)], capture_output=True, text=True)
    assert text.returncode == 0 and str(mine) == text.stdout
    doc = json.loads(subprocess.run([cli(), "diff", "--json", str(old_file), str(new_doc)], capture_output=True,
                                    text=True).stdout)
    assert doc["verdict"] == mine.verdict
    assert [(c["path"], c["change"], c["class"]) for c in doc["changes"]] == \
        [(c.path, c.change, c.verdict) for c in mine.changes]
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(mt.file_schema({"w": mt.tensor("<i8")})))
    proc = subprocess.run([cli(), "diff", str(old_file), str(broken)], capture_output=True, text=True)
    assert proc.returncode == 1 and str(mt.diff(old_file, broken)) == proc.stdout


def test_diff_bad_input(tmp_path):
    with pytest.raises(mt.MetatensorError) as e:
        mt.diff(OLD, {"type": "object", "properties": {"x": {"TypeDef:Nope": True}}})
    assert e.value.code == "MT_UNKNOWN_TYPEDEF"
    with pytest.raises(mt.MetatensorError) as e:
        mt.diff(OLD, '{"type": "object", "properties": {}, "properties": {}}')
    assert e.value.code == "MT_SCHEMA_JSON"
    plain = tmp_path / "plain.safetensors"
    plain.write_bytes(write_safetensors({"a": np.zeros(2, np.float32)}))
    with pytest.raises(ValueError, match="without a metatensor schema"):
        mt.diff(OLD, plain)
    with pytest.raises(FileNotFoundError):
        mt.diff(OLD, tmp_path / "missing.json")
    with pytest.raises(TypeError):
        mt.diff(OLD, 3)  # type: ignore[arg-type]
