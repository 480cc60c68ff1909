"""Tests of ``tensogram.Metadata`` / ``DataObjectDescriptor`` and of the
metadata and descriptor dict rules (spec 04 Part B: B.2, B.3, B.6; path
rules from A.2).

Expected key orders are derived from ``meta.base`` / ``meta.extra`` (whose
order is the wire's canonical CBOR order, spec 02 §1) so that the tests
check the merge rules, not the canonical sort.
"""

from __future__ import annotations

import collections.abc
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import tensogram

FIXTURES = Path("/work/shared/fixtures/tgm")


def desc(shape, dtype="float32", **extra):
    """Descriptor dict of spec 04 B.3 with the three required keys."""
    return {"type": "ntensor", "shape": list(shape), "dtype": dtype, **extra}


def encode_meta(meta, n_objects=1):
    """Encode ``meta`` with ``n_objects`` small float32 objects."""
    pairs = [(desc([2]), np.array([i, i + 1], np.float32)) for i in range(n_objects)]
    return tensogram.encode(meta, pairs)


def roundtrip(meta, n_objects=1):
    return tensogram.decode_metadata(encode_meta(meta, n_objects))


# Two objects; "shared" lives in both base entries and in _extra_, "name" in
# both base entries, "only1" only in base[1]; "note" is a top-level key that
# goes to _extra_ (spec 04 B.2).
MESSAGE_META = {
    "base": [
        {"mars": {"param": "2t", "levelist": [1000, 850]}, "name": "t", "shared": 1},
        {"name": "u", "only1": True, "shared": 2},
    ],
    "_extra_": {"source": "test", "shared": "from-extra"},
    "note": "top",
}


@pytest.fixture(scope="module")
def meta():
    return roundtrip(MESSAGE_META, n_objects=2)


def expected_merged_keys(m):
    """Merged, de-duplicated, first-seen key order of spec 04 B.6."""
    keys = []
    for entry in m.base:
        for k in entry:
            if k != "_reserved_" and k not in keys:
                keys.append(k)
    for k in m.extra:
        if k not in keys:
            keys.append(k)
    return keys


# --------------------------------------------------------------------------
# Sections


def test_version_and_num_objects(meta):
    assert meta.version == 3
    assert meta.num_objects == 2
    assert meta.num_objects == len(meta.base)


def test_base_includes_reserved_tensor(meta):
    assert isinstance(meta.base, list)
    assert len(meta.base) == 2
    for entry in meta.base:
        assert entry["_reserved_"] == {"tensor": {"ndim": 1, "shape": [2], "strides": [1],
                                                  "dtype": "float32"}}
    assert meta.base[0]["mars"] == {"param": "2t", "levelist": [1000, 850]}
    assert {k: v for k, v in meta.base[1].items() if k != "_reserved_"} == \
        {"name": "u", "only1": True, "shared": 2}


def test_base_reserved_tensor_for_2d_and_scalar():
    m = tensogram.decode_metadata(tensogram.encode(
        {}, [(desc([3, 4], "int16"), np.zeros((3, 4), np.int16)),
             (desc([], "float64"), np.zeros((), np.float64))]))
    assert m.base[0]["_reserved_"]["tensor"] == {"ndim": 2, "shape": [3, 4], "strides": [4, 1],
                                                 "dtype": "int16"}
    assert m.base[1]["_reserved_"]["tensor"] == {"ndim": 0, "shape": [], "strides": [],
                                                 "dtype": "float64"}


def test_extra_section(meta):
    assert meta.extra == {"source": "test", "shared": "from-extra", "note": "top"}


UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


def test_reserved_has_encoder_provenance(meta):
    # spec 02 §3.3 step 5: encoder {name, version}, time, uuid.
    reserved = meta.reserved
    assert isinstance(reserved, dict)
    assert set(reserved) >= {"encoder", "time", "uuid"}
    assert isinstance(reserved["encoder"], dict)
    assert set(reserved["encoder"]) >= {"name", "version"}
    assert TIME.match(reserved["time"])
    assert UUID4.match(reserved["uuid"])


def test_reserved_encoder_name(meta):
    # spec 02 §3.3 step 5 has the reference write {"name": "tensogram", ...};
    # this implementation names itself (provenance is outside byte parity).
    assert meta.reserved["encoder"]["name"] == "tensogram-cpp"
    assert isinstance(meta.reserved["encoder"]["version"], str)


def test_sections_of_fixture():
    m = tensogram.decode_metadata((FIXTURES / "simple_f32.tgm").read_bytes())
    assert m.version == 3
    assert m.num_objects == 1
    assert m.extra == {}
    assert m.reserved == {"time": "2026-04-29T18:12:46Z",
                          "uuid": "dca6fc66-2daf-4742-ba5f-db69ccb69eac",
                          "encoder": {"name": "tensogram", "version": "0.20.0"}}
    assert m.base == [{"product": "efi", "parameter": "pressure",
                       "_reserved_": {"tensor": {"ndim": 1, "dtype": "float32", "shape": [4],
                                                 "strides": [1]}}}]


# --------------------------------------------------------------------------
# Mapping protocol


def test_is_a_mapping(meta):
    assert isinstance(meta, collections.abc.Mapping)


def test_getitem_first_base_then_extra(meta):
    assert meta["name"] == "t"          # base[0] wins over base[1]
    assert meta["shared"] == 1          # base[0] wins over base[1] and extra
    assert meta["only1"] is True        # only in base[1]
    assert meta["source"] == "test"     # falls through to extra
    assert meta["note"] == "top"        # top-level key moved to extra
    assert meta["mars"] == {"param": "2t", "levelist": [1000, 850]}


@pytest.mark.parametrize("key", ["missing", "_reserved_", "mars.param", "extra", "_extra_",
                                 "base", "version"])
def test_getitem_missing_is_key_error(meta, key):
    with pytest.raises(KeyError):
        meta[key]


def test_contains(meta):
    for key in ["name", "shared", "only1", "source", "note", "mars"]:
        assert key in meta
    for key in ["missing", "_reserved_", "mars.param", "version"]:
        assert key not in meta


def test_get_with_default(meta):
    assert meta.get("name") == "t"
    assert meta.get("missing") is None
    assert meta.get("missing", 5) == 5
    assert meta.get("missing", default="d") == "d"
    assert meta.get("_reserved_") is None
    assert meta.get("source", "unused") == "test"


def test_keys_values_items_iter_len_order(meta):
    expected = expected_merged_keys(meta)
    # Concrete content, independent of canonical order.
    assert set(expected) == {"mars", "name", "shared", "only1", "source", "note"}
    # base[0] keys come before base[1]-only keys, which come before extra-only keys.
    assert expected.index("only1") > max(expected.index(k) for k in ("mars", "name", "shared"))
    assert expected.index("source") > expected.index("only1")
    assert expected.index("note") > expected.index("only1")

    assert list(meta.keys()) == expected
    assert list(iter(meta)) == expected
    assert list(meta) == expected
    assert len(meta) == len(expected)
    assert list(meta.values()) == [meta[k] for k in expected]
    assert list(meta.items()) == [(k, meta[k]) for k in expected]
    assert dict(meta) == {k: meta[k] for k in expected}


def test_mapping_on_fixture_metadata_parity():
    m = tensogram.decode_metadata((FIXTURES / "metadata_parity.tgm").read_bytes())
    assert list(m.keys()) == expected_merged_keys(m)
    assert set(m.keys()) == {"big", "flag", "mars", "note", "count", "level", "only0", "ratio",
                             "levels", "shortName", "source"}
    assert m["mars"] == {"class": "od", "stream": "oper"}
    assert m["shortName"] == "2t"
    assert m["source"] == "parity-fixture"


def test_empty_metadata_mapping():
    m = roundtrip({})
    assert len(m) == 0
    assert list(m) == []
    assert m.extra == {}
    assert "anything" not in m


# --------------------------------------------------------------------------
# Dotted paths (A.2 rules without the `version` pseudo-key)


def test_has_path_get_path(meta):
    assert meta.has_path("mars.param")
    assert meta.get_path("mars.param") == "2t"
    assert meta.get_path("mars.levelist") == [1000, 850]
    assert meta.get_path("mars") == {"param": "2t", "levelist": [1000, 850]}
    assert meta.get_path("name") == "t"
    assert meta.get_path("shared") == 1
    assert meta.get_path("only1") is True
    # Falls back to _extra_ when no base entry has it.
    assert meta.has_path("source")
    assert meta.get_path("source") == "test"
    assert meta.get_path("note") == "top"


def test_path_extra_prefix(meta):
    # First segment `extra`/`_extra_` → look only in _extra_.
    assert meta.get_path("extra.source") == "test"
    assert meta.get_path("_extra_.source") == "test"
    assert meta.get_path("extra.shared") == "from-extra"
    assert meta.get_path("_extra_.shared") == "from-extra"
    assert not meta.has_path("extra.name")
    assert meta.get_path("extra.name") is None


def test_path_missing_and_default(meta):
    assert not meta.has_path("mars.nope")
    assert meta.get_path("mars.nope") is None
    assert meta.get_path("mars.nope", "d") == "d"
    assert meta.get_path("mars.nope", default=7) == 7
    assert not meta.has_path("missing")
    # Walking through a non-map and array indices are not supported.
    assert not meta.has_path("name.x")
    assert not meta.has_path("mars.levelist.0")
    assert meta.get_path("mars.levelist.0") is None


def test_path_reserved_hidden(meta):
    assert not meta.has_path("_reserved_")
    assert not meta.has_path("_reserved_.tensor")
    assert not meta.has_path("_reserved_.tensor.shape")
    assert meta.get_path("_reserved_.tensor.dtype") is None
    # Descriptor fields are not reachable (spec 04 A.2 consequence).
    assert not meta.has_path("shape")
    assert not meta.has_path("dtype")


def test_path_version_is_not_a_pseudo_key(meta):
    # B.6: rules of A.2 *without* the `version` pseudo-key.
    assert not meta.has_path("version")
    assert meta.get_path("version") is None


def test_path_version_from_legacy_top_level_key():
    # B.2: a legacy "version" key is a free-form _extra_ entry.
    m = roundtrip({"version": 2})
    assert m.extra == {"version": 2}
    assert m.version == 3
    assert m.get_path("version") == 2
    assert m["version"] == 2


def test_path_at_per_object(meta):
    assert meta.has_path_at(1, "only1")
    assert not meta.has_path_at(0, "only1")
    assert meta.get_path_at(0, "name") == "t"
    assert meta.get_path_at(1, "name") == "u"
    assert meta.get_path_at(1, "shared") == 2
    assert meta.get_path_at(0, "mars.param") == "2t"
    assert meta.get_path_at(1, "mars.param") is None
    assert meta.get_path_at(1, "mars.param", "dflt") == "dflt"
    assert meta.get_path_at(1, "missing", default=3) == 3


def test_path_at_has_no_extra_fallback(meta):
    assert not meta.has_path_at(0, "source")
    assert meta.get_path_at(0, "source") is None
    assert not meta.has_path_at(1, "note")
    assert not meta.has_path_at(0, "extra.source")


def test_path_at_reserved_hidden(meta):
    assert not meta.has_path_at(0, "_reserved_")
    assert not meta.has_path_at(0, "_reserved_.tensor")
    assert meta.get_path_at(0, "_reserved_.tensor") is None


def test_paths_on_metadata_parity_fixture():
    # README lookup expectations for metadata_parity.tgm.
    m = tensogram.decode_metadata((FIXTURES / "metadata_parity.tgm").read_bytes())
    assert m.get_path("mars.class") == "od"
    assert m.get_path_at(1, "mars.class") == "ea"
    assert m.get_path("source") == "parity-fixture"
    assert m.has_path_at(0, "only0")
    assert not m.has_path_at(1, "only0")
    assert m.has_path("only0")
    assert not m.has_path("_reserved_.tensor")


# --------------------------------------------------------------------------
# repr


def test_repr(meta):
    # spec 08 §6: sorted extra keys, double-quoted (Rust debug quoting)
    keys = ", ".join('"' + k + '"' for k in sorted(meta.extra))
    assert repr(meta) == f"Metadata(version=3, base_len=2, extra_keys=[{keys}])"
    assert re.fullmatch(r"Metadata\(version=3, base_len=2, extra_keys=\[.*\]\)", repr(meta))
    assert '"note"' in repr(meta) and '"source"' in repr(meta)


def test_repr_empty():
    assert repr(roundtrip({})) == "Metadata(version=3, base_len=1, extra_keys=[])"


# --------------------------------------------------------------------------
# CBOR <-> Python values


def test_value_types_roundtrip():
    values = {
        "s": "text", "empty": "", "i": 42, "neg": -7, "big": 2**63 - 1, "small": -2**63,
        "f": 1.25, "third": 1 / 3, "t": True, "fa": False, "none": None,
        "lst": [1, "a", None, [2.5]], "d": {"nested": {"deep": [True]}},
    }
    m = roundtrip({"base": [values]})
    entry = {k: v for k, v in m.base[0].items() if k != "_reserved_"}
    assert entry == values
    for key, value in values.items():
        assert type(entry[key]) is type(value), key
    assert type(entry["lst"][3][0]) is float
    assert type(entry["d"]["nested"]["deep"][0]) is bool


def test_integral_float_stays_float():
    m = roundtrip({"x": 2.0, "y": 0.5})
    assert type(m.extra["x"]) is float and m.extra["x"] == 2.0
    assert type(m.extra["y"]) is float and m.extra["y"] == 0.5


def test_value_types_from_fixture():
    m = tensogram.decode_metadata((FIXTURES / "metadata_parity.tgm").read_bytes())
    b0 = m.base[0]
    assert b0["big"] == 2147483648 and type(b0["big"]) is int
    assert b0["flag"] is True
    assert b0["note"] == "" and type(b0["note"]) is str
    assert b0["count"] == -5 and type(b0["count"]) is int
    assert b0["level"] == 0 and type(b0["level"]) is int
    assert b0["ratio"] == 0.5 and type(b0["ratio"]) is float  # half-precision on the wire
    assert b0["levels"] == [1000, 850, 500]
    assert b0["mars"] == {"class": "od", "stream": "oper"}


def test_cbor_bytes_value_decodes_to_bytes():
    # No fixture carries a CBOR byte string, so turn base[0]["note"] = "" (text,
    # major type 3, 0x60) into b"" (bytes, major type 2, 0x40): same length.
    # decode_metadata does not verify hashes, so the stale slot is harmless.
    raw = bytearray((FIXTURES / "metadata_parity.tgm").read_bytes())
    marker = b"\x64note\x60"
    pos = bytes(raw).find(marker)
    assert pos > 0 and bytes(raw).find(marker, pos + 1) == -1
    raw[pos + len(marker) - 1] = 0x40
    m = tensogram.decode_metadata(bytes(raw))
    assert m.base[0]["note"] == b""
    assert type(m.base[0]["note"]) is bytes


# --------------------------------------------------------------------------
# B.2 metadata dict rules


def test_extra_alias():
    assert roundtrip({"extra": {"b": 2}}).extra == {"b": 2}


def test_underscore_extra_wins_over_extra_alias():
    m = roundtrip({"_extra_": {"a": 1}, "extra": {"b": 2}})
    assert m.extra == {"a": 1}


def test_other_top_level_keys_go_to_extra():
    m = roundtrip({"foo": 1, "bar": {"x": [1, 2]}, "_extra_": {"a": 1}})
    assert m.extra == {"a": 1, "foo": 1, "bar": {"x": [1, 2]}}


def test_explicit_extra_entry_wins_over_top_level_key():
    m = roundtrip({"_extra_": {"foo": "explicit"}, "foo": "top"})
    assert m.extra == {"foo": "explicit"}
    m = roundtrip({"extra": {"foo": "explicit"}, "foo": "top"})
    assert m.extra == {"foo": "explicit"}


def test_base_padded_to_object_count():
    m = roundtrip({"base": [{"a": 1}]}, n_objects=3)
    assert m.num_objects == 3
    assert m.base[0]["a"] == 1
    assert set(m.base[1]) == {"_reserved_"}
    assert set(m.base[2]) == {"_reserved_"}


def test_no_base_gives_one_entry_per_object():
    m = roundtrip({}, n_objects=2)
    assert m.num_objects == 2
    assert all(set(entry) == {"_reserved_"} for entry in m.base)


def test_reserved_top_level_rejected():
    with pytest.raises(ValueError):
        encode_meta({"_reserved_": {"x": 1}})


def test_reserved_in_base_entry_rejected():
    with pytest.raises(ValueError):
        encode_meta({"base": [{"_reserved_": {"tensor": {}}}]})


def test_nested_reserved_in_base_allowed():
    # spec 02 §3.3 step 1: nested _reserved_ keys deeper inside are allowed.
    m = roundtrip({"base": [{"app": {"_reserved_": 1}}]})
    assert m.base[0]["app"] == {"_reserved_": 1}


@pytest.mark.parametrize("bad", [(1, 2), {1, 2}, b"raw", bytearray(b"x"), object(), 1 + 2j])
@pytest.mark.parametrize("where", ["top_level", "base", "nested"])
def test_unconvertible_values_rejected(bad, where):
    # spec 04 B.2: ValueError("cannot convert <type> to CBOR").
    meta = {"top_level": {"k": bad},
            "base": {"base": [{"k": bad}]},
            "nested": {"_extra_": {"outer": {"inner": [1, bad]}}}}[where]
    with pytest.raises(ValueError, match="cannot convert .* to CBOR"):
        encode_meta(meta)


def test_int_beyond_64_bits_rejected():
    # Assumption: an int outside the 64-bit signed range is not convertible;
    # spec B.2 only lists the accepted range, so ValueError or OverflowError.
    with pytest.raises((ValueError, OverflowError)):
        encode_meta({"k": 2**70})


def test_more_base_entries_than_objects_rejected():
    with pytest.raises(ValueError):
        encode_meta({"base": [{"a": 1}, {"b": 2}, {"c": 3}]}, n_objects=2)


# --------------------------------------------------------------------------
# DataObjectDescriptor


def test_descriptor_attributes():
    msg = tensogram.encode({}, [(desc([3, 4], "float64", compression="zstd", zstd_level=5),
                                 np.zeros((3, 4)))])
    (d, _arr), = tensogram.decode(msg).objects
    assert d.obj_type == "ntensor"
    assert d.ndim == 2
    assert d.shape == [3, 4] and isinstance(d.shape, list)
    assert d.strides == [4, 1] and isinstance(d.strides, list)
    assert d.dtype == "float64"
    assert d.byte_order == sys.byteorder
    assert d.encoding == "none"
    assert d.filter == "none"
    assert d.compression == "zstd"
    assert isinstance(d.params, dict)
    assert d.params["zstd_level"] == 5
    assert d.hash is None


def test_descriptor_attributes_from_fixture():
    _meta, descriptors = tensogram.decode_descriptors((FIXTURES / "mars_metadata.tgm").read_bytes())
    d, = descriptors
    assert (d.obj_type, d.ndim, d.shape, d.strides, d.dtype, d.byte_order) == (
        "ntensor", 2, [2, 3], [3, 1], "float64", "big")
    assert (d.encoding, d.filter, d.compression, d.params, d.hash) == (
        "none", "none", "none", {}, None)


def test_descriptor_repr():
    (d, _), = tensogram.decode(tensogram.encode({}, [(desc([2, 3]), np.zeros((2, 3), np.float32))])).objects
    assert repr(d) == ("DataObjectDescriptor(type='ntensor', shape=[2, 3], dtype='float32', "
                       "encoding='none', compression='none')")
    (d, _), = tensogram.decode(tensogram.encode(
        {}, [(desc([5], "float64", encoding="simple_packing", compression="szip", szip_rsi=128,
               szip_block_size=16, szip_flags=8, sp_bits_per_value=16),
              np.linspace(0, 1, 5))])).objects
    assert repr(d) == ("DataObjectDescriptor(type='ntensor', shape=[5], dtype='float64', "
                       "encoding='simple_packing', compression='szip')")


def test_descriptor_is_read_only():
    (d, _), = tensogram.decode(tensogram.encode({}, [(desc([2]), np.zeros(2, np.float32))])).objects
    with pytest.raises(AttributeError):
        d.dtype = "float64"


# --------------------------------------------------------------------------
# B.3 descriptor dict rules


def encode_one(descriptor, data=None):
    if data is None:
        data = np.zeros(4, np.float32)
    return tensogram.encode({}, [(descriptor, data)])


@pytest.mark.parametrize("missing", ["type", "shape", "dtype"])
def test_missing_required_descriptor_key(missing):
    d = desc([4])
    del d[missing]
    with pytest.raises(ValueError):
        encode_one(d)


@pytest.mark.parametrize("dtype", ["float128", "f4", "string", ""])
def test_unknown_dtype(dtype):
    with pytest.raises(ValueError, match="unknown dtype"):
        encode_one(desc([4], dtype), b"\x00" * 16)


@pytest.mark.parametrize("order", ["middle", "BIG", "native", ""])
def test_bad_byte_order(order):
    with pytest.raises(ValueError):
        encode_one(desc([4], byte_order=order))


@pytest.mark.parametrize("order", ["little", "big"])
def test_explicit_byte_order(order):
    values = np.array([1.0, -2.0, 3.5, 8.0], dtype=("<f4" if order == "little" else ">f4"))
    (d, arr), = tensogram.decode(encode_one(desc([4], byte_order=order), values.tobytes())).objects
    assert d.byte_order == order
    np.testing.assert_array_equal(arr, values.astype(np.float32))


def test_explicit_strides_kept():
    (d, _), = tensogram.decode(encode_one(desc([2, 2], strides=[2, 1]),
                                          np.zeros((2, 2), np.float32))).objects
    assert d.strides == [2, 1]


def test_ndim_and_hash_ignored():
    (d, _), = tensogram.decode(encode_one(desc([4], ndim=7, hash="deadbeef"))).objects
    assert d.ndim == 1
    assert "ndim" not in d.params
    assert "hash" not in d.params
    assert d.hash is None


def test_other_keys_become_params():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # codec-like keys must not warn
        (d, _), = tensogram.decode(encode_one(desc([4], my_setting="v", my_number=3))).objects
    assert d.params["my_setting"] == "v"
    assert d.params["my_number"] == 3


APPLICATION_KEYS = ["name", "param", "shortName", "long_name", "description", "units",
                    "dim_names", "mars", "cf", "product", "instrument"]


@pytest.mark.parametrize("key", APPLICATION_KEYS)
def test_application_keys_warn_but_are_stored(key):
    with pytest.warns(UserWarning):
        msg = encode_one(desc([4], **{key: "value"}))
    (d, _), = tensogram.decode(msg).objects
    assert d.params[key] == "value"


def test_application_key_warns_in_streaming_encoder():
    enc = tensogram.StreamingEncoder({})
    with pytest.warns(UserWarning):
        enc.write_object(desc([1], units="K"), np.zeros(1, np.float32))
    (d, _), = tensogram.decode(enc.finish()).objects
    assert d.params["units"] == "K"
