"""Tests of the module-level functions, constants and exceptions of
``tensogram`` against spec 04 Part B (B.1, B.5, B.7; validate report shape
and issue codes from A.5 ``validate --json``; doctor shape from A.5
``doctor --json``).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import tensogram

FIXTURES = Path("/work/shared/fixtures/tgm")
HEX16 = re.compile(r"^[0-9a-f]{16}$")


def desc(shape, dtype="float32", **extra):
    """Descriptor dict of spec 04 B.3 with the three required keys."""
    return {"type": "ntensor", "shape": list(shape), "dtype": dtype, **extra}


def two_object_message(hash="xxh3"):
    """An uncompressed two-object message and its arrays."""
    a = np.arange(8, dtype=np.float64)
    b = np.arange(100, 116, dtype=np.float64)
    msg = tensogram.encode({"base": [{"name": "a"}, {"name": "b"}]},
                           [(desc([8], "float64"), a), (desc([16], "float64"), b)], hash=hash)
    return msg, a, b


def flip_payload_byte(msg: bytes, payload: bytes, offset: int = 3) -> bytes:
    """Flip one byte inside ``payload`` where it appears in ``msg``."""
    pos = msg.find(payload)
    assert pos > 0, "payload not found verbatim in message"
    out = bytearray(msg)
    out[pos + offset] ^= 0xFF
    return bytes(out)


# --------------------------------------------------------------------------
# B.1 module contents


B1_FUNCTIONS = [
    "encode", "encode_pre_encoded", "decode", "decode_with_masks", "decode_metadata",
    "decode_descriptors", "decode_object", "decode_range", "scan", "iter_messages", "validate",
    "validate_file", "compute_hash", "compute_packing_params", "convert_grib",
    "convert_grib_buffer", "convert_netcdf", "to_grib", "to_netcdf", "doctor", "is_remote_url",
]
B1_CLASSES = ["Metadata", "DataObjectDescriptor", "TensogramFile", "TensogramFileIter",
              "MessageIter", "StreamingEncoder"]


@pytest.mark.parametrize("name", B1_FUNCTIONS)
def test_b1_functions_present(name):
    assert callable(getattr(tensogram, name, None)), f"tensogram.{name} missing"


@pytest.mark.parametrize("name", B1_CLASSES)
def test_b1_classes_present(name):
    assert isinstance(getattr(tensogram, name, None), type), f"tensogram.{name} missing"


def test_async_classes_present_when_async_feature_on():
    # B.6: AsyncTensogramFile is present when built with async support; the
    # doctor report says whether the "async" feature is on.
    features = {row["name"]: row["state"] for row in tensogram.doctor()["features"]}
    if features.get("async") == "on":
        assert isinstance(getattr(tensogram, "AsyncTensogramFile", None), type)
        assert isinstance(getattr(tensogram, "AsyncTensogramFileIter", None), type)


def test_constants():
    assert tensogram.WIRE_VERSION == 3
    assert tensogram.__version__ == "0.24.0"
    assert isinstance(tensogram.__has_grib__, bool)
    assert isinstance(tensogram.__has_netcdf__, bool)


def test_message_is_namedtuple():
    Message = tensogram.Message
    assert issubclass(Message, tuple)
    assert Message._fields == ("metadata", "objects")
    m = Message(1, 2)
    assert m.metadata == 1 and m.objects == 2
    assert m == (1, 2)
    assert repr(m) == "Message(metadata=1, objects=2)"
    msg, _a, _b = two_object_message()
    decoded = tensogram.decode(msg)
    assert isinstance(decoded, Message)
    meta, objects = decoded
    assert meta is decoded.metadata and objects is decoded.objects


def test_exception_hierarchy():
    assert issubclass(tensogram.IntegrityError, Exception)
    assert issubclass(tensogram.MissingHashError, tensogram.IntegrityError)
    assert issubclass(tensogram.HashMismatchError, tensogram.IntegrityError)
    # Doc drift in B.7: *not* RuntimeError (nor ValueError).
    for cls in (tensogram.IntegrityError, tensogram.MissingHashError, tensogram.HashMismatchError):
        assert not issubclass(cls, RuntimeError)
        assert not issubclass(cls, ValueError)
    assert not issubclass(tensogram.MissingHashError, tensogram.HashMismatchError)
    assert not issubclass(tensogram.HashMismatchError, tensogram.MissingHashError)


# --------------------------------------------------------------------------
# validate


REPORT_KEYS = {"issues", "object_count", "hash_verified"}
ISSUE_LEVELS = {"structure", "metadata", "integrity", "fidelity"}


def assert_issue_shape(issue):
    assert {"code", "level", "severity", "description"} <= set(issue)
    assert set(issue) <= {"code", "level", "severity", "description", "object_index", "byte_offset"}
    assert issue["level"] in ISSUE_LEVELS
    assert issue["severity"] in {"error", "warning"}
    assert isinstance(issue["description"], str) and issue["description"]


@pytest.mark.parametrize("level", ["quick", "default", "checksum", "full"])
def test_validate_clean_message_all_levels(level):
    msg, _a, _b = two_object_message()
    report = tensogram.validate(msg, level=level)
    assert set(report) == REPORT_KEYS
    assert report["issues"] == []
    assert report["object_count"] == 2
    # quick runs only the structure level: no hash check (A.5).
    assert report["hash_verified"] is (level != "quick")


def test_validate_default_level_and_canonical():
    msg, _a, _b = two_object_message()
    assert tensogram.validate(msg) == tensogram.validate(msg, level="default")
    assert tensogram.validate(msg, check_canonical=True)["issues"] == []


@pytest.mark.parametrize("level", ["fast", "QUICK", "", "structure", "1"])
def test_validate_bad_level(level):
    msg, _a, _b = two_object_message()
    with pytest.raises(ValueError):
        tensogram.validate(msg, level=level)


@pytest.mark.parametrize("level", ["default", "checksum", "full"])
def test_validate_corrupted_payload_reports_hash_mismatch(level):
    msg, _a, b = two_object_message()
    bad = flip_payload_byte(msg, b.tobytes())
    report = tensogram.validate(bad, level=level)
    assert set(report) == REPORT_KEYS
    assert report["hash_verified"] is False
    assert report["object_count"] == 2
    for issue in report["issues"]:
        assert_issue_shape(issue)
    mismatches = [i for i in report["issues"] if i["code"] == "hash_mismatch"]
    assert len(mismatches) == 1
    assert mismatches[0]["level"] == "integrity"
    assert mismatches[0]["severity"] == "error"
    assert mismatches[0]["object_index"] == 1


def test_validate_truncated_message_structure_error():
    msg, _a, _b = two_object_message()
    report = tensogram.validate(msg[:100])
    errors = [i for i in report["issues"] if i["severity"] == "error"]
    assert errors
    for issue in errors:
        assert_issue_shape(issue)
    assert errors[0]["level"] == "structure"
    assert errors[0]["code"] == "total_length_exceeds_buffer"
    assert report["hash_verified"] is False


def test_validate_bad_magic():
    msg, _a, _b = two_object_message()
    report = tensogram.validate(b"XENSOGRM" + msg[8:], level="quick")
    codes = [i["code"] for i in report["issues"]]
    assert "invalid_magic" in codes


def test_validate_legacy_fixture_hash_verification_error():
    # Fixture README: default validation of a legacy-hash file reports
    # hash_verification_error for each object.
    raw = (FIXTURES / "single-msg.tgm").read_bytes()
    report = tensogram.validate(raw)
    codes = [i["code"] for i in report["issues"]]
    assert "hash_verification_error" in codes
    assert report["hash_verified"] is False


def test_validate_hashed_fixture_verifies():
    report = tensogram.validate((FIXTURES / "multi_object_xxh3.tgm").read_bytes(), level="full")
    assert report == {"issues": [], "object_count": 3, "hash_verified": True}


# --------------------------------------------------------------------------
# validate_file


def test_validate_file_report_shape(tmp_path):
    msg, _a, _b = two_object_message()
    junk = b"not a message!!"
    path = tmp_path / "v.tgm"
    path.write_bytes(msg + junk + msg)
    result = tensogram.validate_file(str(path))
    assert set(result) == {"file_issues", "messages"}
    assert result["file_issues"] == [
        {"byte_offset": len(msg), "length": len(junk),
         "description": result["file_issues"][0]["description"]}]
    assert isinstance(result["file_issues"][0]["description"], str)
    assert len(result["messages"]) == 2
    for report in result["messages"]:
        assert set(report) == REPORT_KEYS
        assert report["issues"] == []
        assert report["object_count"] == 2
        assert report["hash_verified"] is True


def test_validate_file_clean_and_levels(tmp_path):
    msg, _a, b = two_object_message()
    path = tmp_path / "clean.tgm"
    path.write_bytes(msg + flip_payload_byte(msg, b.tobytes()))
    result = tensogram.validate_file(str(path), level="checksum")
    assert result["file_issues"] == []
    assert [r["hash_verified"] for r in result["messages"]] == [True, False]
    quick = tensogram.validate_file(str(path), level="quick")
    assert [r["issues"] for r in quick["messages"]] == [[], []]
    with pytest.raises(ValueError):
        tensogram.validate_file(str(path), level="bogus")


def test_validate_file_missing(tmp_path):
    with pytest.raises(OSError):
        tensogram.validate_file(str(tmp_path / "missing.tgm"))


# --------------------------------------------------------------------------
# scan / iter_messages


def test_scan_with_junk_between_messages():
    m1, _a, _b = two_object_message()
    m2 = tensogram.encode({}, [(desc([3], "int8"), np.array([1, 2, 3], np.int8))])
    parts = [b"\x00junk", m1, b"garbage-between", m2, m1, b"TENSOGRM-truncated", b"tail"]
    buf = b"".join(parts)
    expected = []
    offset = 0
    for part in parts:
        if part in (m1, m2):
            expected.append((offset, len(part)))
        offset += len(part)
    result = tensogram.scan(buf)
    assert result == expected
    assert all(isinstance(t, tuple) for t in result)


def test_scan_empty_and_junk_only():
    assert tensogram.scan(b"") == []
    assert tensogram.scan(b"x" * 200) == []


def test_scan_fixtures():
    assert tensogram.scan((FIXTURES / "multi_message.tgm").read_bytes()) == [(0, 584), (584, 584)]
    assert tensogram.scan((FIXTURES / "streaming-tail.tgm").read_bytes()) == \
        [(592 * i, 592) for i in range(9)] + [(5328, 656)]


def test_scan_accepts_bytearray_and_memoryview():
    msg, _a, _b = two_object_message()
    assert tensogram.scan(bytearray(msg)) == [(0, len(msg))]
    assert tensogram.scan(memoryview(msg)) == [(0, len(msg))]


def test_iter_messages_yields_messages():
    msgs = [tensogram.encode({"base": [{"i": i}]}, [(desc([2]), np.full(2, i, np.float32))])
            for i in range(3)]
    it = tensogram.iter_messages(b"junk" + b"".join(msgs) + b"tail")
    assert isinstance(it, tensogram.MessageIter)
    results = list(it)
    assert len(results) == 3
    for i, message in enumerate(results):
        assert isinstance(message, tensogram.Message)
        assert message.metadata.base[0]["i"] == i
        np.testing.assert_array_equal(message.objects[0][1], np.full(2, i, np.float32))


def test_iter_messages_owns_a_copy():
    msgs = [tensogram.encode({}, [(desc([4]), np.full(4, i, np.float32))]) for i in range(2)]
    source = bytearray(b"".join(msgs))
    it = tensogram.iter_messages(source)
    # Destroy the caller's buffer after the iterator was created.
    source[:] = b"\x00" * len(source)
    results = list(it)
    assert len(results) == 2
    np.testing.assert_array_equal(results[1].objects[0][1], np.full(4, 1, np.float32))


def test_iter_messages_verify_hash():
    msg, _a, b = two_object_message()
    # Clean: fine.
    assert len(list(tensogram.iter_messages(msg, verify_hash=True))) == 1
    with pytest.raises(tensogram.HashMismatchError):
        list(tensogram.iter_messages(flip_payload_byte(msg, b.tobytes()), verify_hash=True))
    no_hash, _a, _b = two_object_message(hash=None)
    with pytest.raises(tensogram.MissingHashError):
        list(tensogram.iter_messages(no_hash, verify_hash=True))
    # Default: no verification.
    assert len(list(tensogram.iter_messages(no_hash))) == 1


# --------------------------------------------------------------------------
# compute_hash


def test_compute_hash_known_values():
    assert tensogram.compute_hash(b"hello world") == "d447b1ea40e6988b"
    assert tensogram.compute_hash(bytearray(b"hello world")) == "d447b1ea40e6988b"
    assert tensogram.compute_hash(b"hello world", algo="xxh3") == "d447b1ea40e6988b"
    # XXH3-64 of the empty input (seed 0).
    assert tensogram.compute_hash(b"") == "2d06800538d394c2"


def test_compute_hash_format():
    h = tensogram.compute_hash(bytes(range(256)) * 10)
    assert HEX16.match(h)
    assert h != tensogram.compute_hash(bytes(range(256)) * 10 + b"\x00")


@pytest.mark.parametrize("algo", ["md5", "sha256", "XXH3x", "XXH3", ""])
def test_compute_hash_bad_algo(algo):
    with pytest.raises(ValueError):
        tensogram.compute_hash(b"hello world", algo=algo)


def test_compute_hash_rejects_str():
    with pytest.raises((TypeError, ValueError)):
        tensogram.compute_hash("hello world")


# --------------------------------------------------------------------------
# compute_packing_params


PACKING_KEYS = {"sp_reference_value", "sp_binary_scale_factor", "sp_decimal_scale_factor",
                "sp_bits_per_value"}


@pytest.mark.parametrize("fn_name", ["compute_packing_params", "simple_packing_compute_params"])
def test_compute_packing_params(fn_name):
    fn = getattr(tensogram, fn_name)
    values = np.linspace(250.0, 310.0, 200)
    params = fn(values, 16, 0)
    assert set(params) == PACKING_KEYS
    assert params["sp_bits_per_value"] == 16
    assert params["sp_decimal_scale_factor"] == 0
    assert isinstance(params["sp_binary_scale_factor"], int)
    assert params["sp_reference_value"] <= values.min()
    # Spreadable into a descriptor (B.5): round trip within packing precision.
    msg = tensogram.encode({}, [(desc([200], "float64", encoding="simple_packing", **params),
                                 values)])
    (_d, out), = tensogram.decode(msg).objects
    np.testing.assert_allclose(out, values, atol=60.0 / 2**15, rtol=0)


def test_compute_packing_params_decimal_scale_echoed():
    params = tensogram.compute_packing_params(np.array([1.5, 2.5, 3.25]), 12, 2)
    assert params["sp_decimal_scale_factor"] == 2
    assert params["sp_bits_per_value"] == 12


def test_compute_packing_params_aliases_agree():
    values = np.array([0.0, 1.0, 7.5, -3.0])
    assert tensogram.compute_packing_params(values, 10, 1) == \
        tensogram.simple_packing_compute_params(values, 10, 1)


def test_compute_packing_params_nan_rejected():
    with pytest.raises(ValueError):
        tensogram.compute_packing_params(np.array([1.0, np.nan, 3.0]), 16, 0)


# --------------------------------------------------------------------------
# encode hash option, encode_pre_encoded


@pytest.mark.parametrize("off", [None, "none"])
def test_encode_without_hash(off):
    msg, _a, _b = two_object_message(hash=off)
    report = tensogram.validate(msg)
    assert report["hash_verified"] is False
    # spec 01 §3.1: bit 7 clear → integrity skipped with no_hash_available.
    assert "no_hash_available" in [i["code"] for i in report["issues"]]
    assert all(i["severity"] == "warning" for i in report["issues"])


def test_encode_default_hash_verified():
    msg, _a, _b = two_object_message()
    assert tensogram.validate(msg)["hash_verified"] is True


@pytest.mark.parametrize("algo", ["md5", "sha1", "XXH3-128", ""])
def test_encode_bad_hash(algo):
    with pytest.raises(ValueError):
        tensogram.encode({}, [(desc([2]), np.zeros(2, np.float32))], hash=algo)


def test_encode_pre_encoded_verbatim():
    payload = bytes(range(7, 7 + 24))
    msg = tensogram.encode_pre_encoded({"base": [{"name": "raw"}]},
                                       [(desc([24], "uint8"), payload)])
    assert isinstance(msg, bytes)
    assert payload in msg
    meta, ((d, arr),) = tensogram.decode(msg, verify_hash=True)
    assert meta.base[0]["name"] == "raw"
    assert arr.tobytes() == payload
    # The hash is still computed (B.5).
    assert tensogram.validate(msg)["hash_verified"] is True


def test_encode_pre_encoded_float_bytes():
    values = np.array([1.0, 2.5, -4.0], dtype=np.float64)
    msg = tensogram.encode_pre_encoded({}, [(desc([3], "float64"), bytearray(values.tobytes()))])
    np.testing.assert_array_equal(tensogram.decode(msg).objects[0][1], values)


def test_encode_pre_encoded_takes_bytes_or_a_uint8_vector():
    # spec 08 §1.5: a byte vector (bytes, bytearray, 1-D uint8 array), nothing else
    msg = tensogram.encode_pre_encoded({}, [(desc([4], "uint8"), np.arange(4, dtype=np.uint8))])
    assert tensogram.decode(msg).objects[0][1].tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError) as e:
        tensogram.encode_pre_encoded({}, [(desc([4], "uint8"), np.arange(4, dtype=np.float32))])
    assert str(e.value) == ("encode_pre_encoded requires bytes data (got ndarray) — "
                            "the payload must already be in its final wire form")


def test_encode_pre_encoded_hash_none():
    msg = tensogram.encode_pre_encoded({}, [(desc([4], "uint8"), b"\x01\x02\x03\x04")], hash=None)
    assert tensogram.validate(msg)["hash_verified"] is False


# --------------------------------------------------------------------------
# is_remote_url


@pytest.mark.parametrize("url", [
    "s3://bucket/key.tgm", "S3://bucket/key.tgm", "s3a://bucket/k", "gs://bucket/k",
    "az://container/blob", "azure://container/blob", "AZURE://c/b", "http://host/f.tgm",
    "https://host/f.tgm", "HTTPS://host/f.tgm",
])
def test_is_remote_url_true(url):
    assert tensogram.is_remote_url(url) is True


@pytest.mark.parametrize("url", [
    "/tmp/file.tgm", "relative/file.tgm", "file:///tmp/file.tgm", "ftp://host/f", "",
    "s3.tgm", "C:\\data\\f.tgm", "hdfs://nn/f",
])
def test_is_remote_url_false(url):
    assert tensogram.is_remote_url(url) is False


# --------------------------------------------------------------------------
# doctor


def test_doctor_shape():
    report = tensogram.doctor()
    assert isinstance(report, dict)
    assert {"build", "features", "self_test"} <= set(report)
    build = report["build"]
    assert {"version", "wire_version", "target", "profile"} <= set(build)
    assert build["wire_version"] == 3
    assert isinstance(build["version"], str)
    names = [row["name"] for row in report["features"]]
    # Core rows only, in the A.5 order (converter rows omitted by the library).
    assert names == ["szip", "szip-pure", "zstd", "zstd-pure", "lz4", "blosc2", "zfp", "sz3",
                     "threads", "remote", "mmap", "async"]
    for row in report["features"]:
        assert row["kind"] in {"compression", "threading", "io", "converter"}
        assert row["state"] in {"on", "off"}
        if row["state"] == "on":
            assert {"backend", "linkage", "version"} <= set(row)
    labels = [row["label"] for row in report["self_test"]]
    assert not any(label.startswith("convert") for label in labels)
    assert "encode/decode  none/none/none" in labels
    assert "hash xxh3 verify" in labels
    for row in report["self_test"]:
        assert row["outcome"] in {"ok", "failed", "skipped"}
        if row["outcome"] == "skipped":
            assert row["reason"].startswith("feature '")
        if row["outcome"] == "failed":
            assert isinstance(row["error"], str)


def test_doctor_self_test_healthy():
    report = tensogram.doctor()
    failed = [row for row in report["self_test"] if row["outcome"] == "failed"]
    assert failed == []


# --------------------------------------------------------------------------
# verify_hash / integrity exceptions


def test_missing_hash_error():
    msg, _a, _b = two_object_message(hash=None)
    tensogram.decode(msg)  # no verification by default
    with pytest.raises(tensogram.MissingHashError) as info:
        tensogram.decode(msg, verify_hash=True)
    assert info.value.object_index == 0
    assert isinstance(info.value, tensogram.IntegrityError)
    with pytest.raises(tensogram.MissingHashError) as info:
        tensogram.decode_object(msg, 1, verify_hash=True)
    assert info.value.object_index == 1


def test_hash_mismatch_error():
    msg, a, b = two_object_message()
    bad = flip_payload_byte(msg, b.tobytes())
    with pytest.raises(tensogram.HashMismatchError) as info:
        tensogram.decode(bad, verify_hash=True)
    err = info.value
    assert isinstance(err, tensogram.IntegrityError)
    assert err.object_index == 1
    assert HEX16.match(err.expected) and HEX16.match(err.actual)
    assert err.expected != err.actual
    # The stored digest is listed (as text) in the message's hash frame.
    assert err.expected.encode() in bad
    assert str(err).startswith("HashMismatch: object_index=")
    assert str(err) == (f"HashMismatch: object_index=1, expected={err.expected}, "
                        f"actual={err.actual}")
    # Object 0 is intact and verifies on its own.
    _m, _d, arr = tensogram.decode_object(bad, 0, verify_hash=True)
    np.testing.assert_array_equal(arr, a)
    with pytest.raises(tensogram.HashMismatchError):
        tensogram.decode_object(bad, 1, verify_hash=True)


def test_tampered_message_decodes_without_verification():
    msg, _a, b = two_object_message()
    bad = flip_payload_byte(msg, b.tobytes())
    _meta, objects = tensogram.decode(bad)
    assert not np.array_equal(objects[1][1], b)
    # decode_range never verifies hashes (B.5).
    part = tensogram.decode_range(bad, 1, [(4, 4)], join=True)
    np.testing.assert_array_equal(part, b[4:8])


def test_hash_mismatch_on_fixture_tamper():
    # Fixture README: flipping a byte in object N's body of
    # multi_object_xxh3.tgm gives HashMismatch for object N (object 2 =
    # uint8 [10, 20, 30, 40, 50]).
    raw = (FIXTURES / "multi_object_xxh3.tgm").read_bytes()
    bad = flip_payload_byte(raw, bytes([10, 20, 30, 40, 50]), offset=2)
    with pytest.raises(tensogram.HashMismatchError) as info:
        tensogram.decode(bad, verify_hash=True)
    assert info.value.object_index == 2
    assert info.value.expected == "dca3a5038096aed3"


def test_decode_object_bad_index():
    msg, _a, _b = two_object_message()
    with pytest.raises(ValueError):
        tensogram.decode_object(msg, 2)
