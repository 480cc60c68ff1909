"""Spec 08 §1: exact exception classes and texts of the encode-side arguments (§1.3-§1.6), of the
decode side (§1.7), files (§1.8), StreamingEncoder (§1.9) and the descriptor warning (§1.11)."""

import os
import warnings

import numpy as np
import pytest

import tensogram

D = {"type": "ntensor", "shape": [2], "dtype": "float32"}
A = np.ones(2, np.float32)


def _raises(cls, text, call):
    with pytest.raises(cls) as e:
        call()
    assert type(e.value) is cls, type(e.value)
    assert str(e.value) == text
    return e.value


# ---- §1.3 global_meta_dict -------------------------------------------------------------------

@pytest.mark.parametrize("meta, cls, text", [
    ([], TypeError, "argument 'global_meta_dict': 'list' object is not an instance of 'dict'"),
    ({"base": {}}, ValueError, "'base' must be a list of dicts"),
    ({"base": [1]}, ValueError, "expected a dict"),
    ({"base": [{1: 2}]}, TypeError, "'int' object is not an instance of 'str'"),
    ({"base": [{"_reserved_": {}}]}, ValueError,
     "base entries must not contain '_reserved_' key — the encoder populates it"),
    ({"_extra_": 1}, ValueError, "'_extra_' must be a dict"),
    ({"extra": 1}, ValueError, "'extra' must be a dict when provided as a convenience alias for '_extra_'"),
    ({"_reserved_": {}}, ValueError, "'_reserved_' must not be set by client code — the encoder populates it"),
    ({2: 1}, TypeError, "'int' object is not an instance of 'str'"),
    ({"a": (1, 2)}, ValueError, "cannot convert tuple to CBOR"),
    ({"a": {1, 2}}, ValueError, "cannot convert set to CBOR"),
    ({"a": b"x"}, ValueError, "cannot convert bytes to CBOR"),
    ({"a": np.zeros(3)}, ValueError, "cannot convert ndarray to CBOR"),
])
def test_global_meta_dict_errors(meta, cls, text):
    _raises(cls, text, lambda: tensogram.encode(meta, [(D, A)]))


def test_global_meta_dict_checks_come_in_order():
    # base problems are reported before _extra_ and _reserved_ ones
    _raises(ValueError, "expected a dict", lambda: tensogram.encode({"base": [1], "_extra_": 1, "_reserved_": 1}, []))
    _raises(ValueError, "'_extra_' must be a dict", lambda: tensogram.encode({"_extra_": 1, "_reserved_": 1}, []))


def test_value_conversion_order():
    class Floaty:
        def __float__(self):
            return 2.5

    meta = tensogram.decode_metadata(tensogram.encode(
        {"i": np.int16(7), "f": np.float32(0.5), "b": np.bool_(True), "x": Floaty(), "n": None,
         "nested": {1: "int key"}}, [(D, A)]))
    assert meta["i"] == 7 and type(meta["i"]) is int
    assert meta["f"] == 0.5 and meta["b"] is True and meta["x"] == 2.5 and meta["n"] is None
    assert meta["nested"] == {1: "int key"}


# ---- §1.4 descriptor dict ----------------------------------------------------------------------

@pytest.mark.parametrize("desc, cls, text", [
    ({"shape": [2], "dtype": "float32"}, ValueError, "descriptor missing 'type'"),
    ({"type": "ntensor", "dtype": "float32"}, ValueError, "descriptor missing 'shape'"),
    ({"type": "ntensor", "shape": [2]}, ValueError, "descriptor missing 'dtype'"),
    ({**D, "type": 1}, TypeError, "'int' object is not an instance of 'str'"),
    ({**D, "dtype": None}, TypeError, "'None' is not an instance of 'str'"),
    ({**D, "shape": "ab"}, TypeError, "Can't extract `str` to `Vec`"),
    ({**D, "shape": 2}, TypeError, "'int' object is not an instance of 'Sequence'"),
    ({**D, "shape": [-2]}, OverflowError, "can't convert negative int to unsigned"),
    ({**D, "shape": [2.0]}, TypeError, "'float' object cannot be interpreted as an integer"),
    ({**D, "shape": [np.float64(2)]}, TypeError, "'numpy.float64' object cannot be interpreted as an integer"),
    ({**D, "strides": "x"}, TypeError, "Can't extract `str` to `Vec`"),
    ({**D, "dtype": "f32"}, ValueError, "unknown dtype: f32"),
    ({**D, "byte_order": "Little"}, ValueError, "unknown byte_order: 'Little', expected 'little' or 'big'"),
    ({**D, "compression": 3}, TypeError, "'int' object is not an instance of 'str'"),
    ({**D, 5: 1}, TypeError, "'int' object is not an instance of 'str'"),
    ({**D, "zstd_level": (1,)}, ValueError, "cannot convert tuple to CBOR"),
])
def test_descriptor_errors(desc, cls, text):
    _raises(cls, text, lambda: tensogram.encode({}, [(desc, A)]))


def test_shape_takes_any_int_sequence():
    for shape in ([2], (2,), np.array([2], dtype=np.int64)):
        msg = tensogram.encode({}, [({**D, "shape": shape}, A)])
        assert tensogram.decode(msg).objects[0][0].shape == [2]


# ---- §1.5 pairs and payloads --------------------------------------------------------------------

def test_pair_errors():
    _raises(TypeError, "argument 'descriptors_and_data': 'tuple' object is not an instance of 'list'",
            lambda: tensogram.encode({}, ((D, A),)))
    _raises(ValueError, "each element must be a (descriptor_dict, data) tuple",
            lambda: tensogram.encode({}, [[D, A]]))
    _raises(ValueError, "each element must be a (descriptor_dict, data) tuple of length 2",
            lambda: tensogram.encode({}, [(D, A, 1)]))
    _raises(ValueError, "each element must be a (descriptor_dict, bytes) tuple",
            lambda: tensogram.encode_pre_encoded({}, [[D, b""]]))
    _raises(ValueError, "each element must be a (descriptor_dict, bytes) tuple of length 2",
            lambda: tensogram.encode_pre_encoded({}, [(D,)]))
    _raises(ValueError, "first element of each pair must be a descriptor dict",
            lambda: tensogram.encode({}, [(1, A)]))
    _raises(ValueError, "data must be a numpy array or bytes", lambda: tensogram.encode({}, [(D, "ab")]))
    _raises(ValueError, "data must be a numpy array or bytes", lambda: tensogram.encode({}, [(D, 12)]))
    _raises(ValueError, "encode_pre_encoded requires bytes data (got str) — the payload must already be in "
                        "its final wire form", lambda: tensogram.encode_pre_encoded({}, [(D, "ab")]))


def test_append_uses_the_same_texts(tmp_path):
    with tensogram.TensogramFile.create(str(tmp_path / "a.tgm")) as f:
        _raises(ValueError, "each element must be a (descriptor_dict, data) tuple", lambda: f.append({}, [[D, A]]))
        _raises(TypeError, "argument 'global_meta_dict': 'int' object is not an instance of 'dict'",
                lambda: f.append(1, [(D, A)]))


# ---- §1.6 options -----------------------------------------------------------------------------------

def test_option_errors():
    _raises(ValueError, 'unknown mask method "gzip" (expected "none" | "rle" | "roaring" | "lz4" | "zstd" | '
                        '"blosc2")', lambda: tensogram.encode({}, [(D, A)], nan_mask_method="gzip"))
    _raises(ValueError, "unknown aggregate_hash policy \"x\\ty\"; expected one of: 'auto', 'none', 'header', "
                        "'footer', 'both'", lambda: tensogram.encode({}, [(D, A)], aggregate_hash="x\ty"))
    _raises(OverflowError, "can't convert negative int to unsigned",
            lambda: tensogram.encode({}, [(D, A)], small_mask_threshold_bytes=-1))
    for policy, word in (("header", "Header"), ("both", "Both")):
        _raises(ValueError, f"EncodingError: AggregateHashPolicy::{word} is not supported in streaming mode — "
                            "the header is written before any data object, so per-object hashes are not yet "
                            "known.  Use Auto (defaults to Footer in streaming) or Footer explicitly.",
                lambda: tensogram.StreamingEncoder({}, aggregate_hash=policy))


def test_pairs_are_converted_before_option_values():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _raises(ValueError, 'metadata error: unknown hash type: md5; expected "xxh3" or "none"',
                lambda: tensogram.encode({}, [({**D, "units": "K"}, A)], hash="md5"))
    assert len(caught) == 1                                # the warning came first


# ---- §1.7 decode side ---------------------------------------------------------------------------

def test_decode_side_errors():
    msg = tensogram.encode({}, [(D, A)])
    _raises(TypeError, "argument 'buf': 'str' object is not an instance of 'bytes | bytearray'",
            lambda: tensogram.decode("x"))
    _raises(TypeError, "argument 'buf': 'None' is not an instance of 'bytes | bytearray'",
            lambda: tensogram.decode(None))
    _raises(OverflowError, "can't convert negative int to unsigned", lambda: tensogram.decode_object(msg, -1))
    _raises(ValueError, "unknown validation level: 'x', expected one of: quick, default, checksum, full",
            lambda: tensogram.validate(msg, level="x"))
    _raises(ValueError, "ObjectError: object index 5 out of range (num_objects=1)",
            lambda: tensogram.decode_object(msg, 5))


# ---- §1.8 files -----------------------------------------------------------------------------------

def test_file_errors(tmp_path):
    path = str(tmp_path / "f.tgm")
    with tensogram.TensogramFile.create(path) as f:
        f.append({}, [(D, A)])
    f = tensogram.TensogramFile.open(path)
    _raises(IndexError, "message index -5 out of range for file with 1 messages", lambda: f[-5])
    _raises(IndexError, "message index 1 out of range for file with 1 messages", lambda: f[1])
    _raises(TypeError, "indices must be integers or slices", lambda: f["0"])
    for call in (lambda: f.decode_message(1), lambda: f.read_message(1), lambda: f.file_decode_metadata(1),
                 lambda: f.file_decode_descriptors(1), lambda: f.file_decode_object(1, 0),
                 lambda: f.file_decode_range(1, 0, [(0, 1)])):
        _raises(ValueError, "FramingError: message index 1 out of range (count=1)", call)
    _raises(OverflowError, "can't convert negative int to unsigned", lambda: f.decode_message(-1))
    _raises(OSError, "batch object decode requires a remote backend", lambda: f.file_decode_object_batch([0], 0))
    _raises(OSError, "batch range decode requires a remote backend",
            lambda: f.file_decode_range_batch([0], 0, [(0, 1)]))


def test_async_batch_errors_on_await(tmp_path):
    import asyncio

    path = str(tmp_path / "f.tgm")
    with tensogram.TensogramFile.create(path) as f:
        f.append({}, [(D, A)])

    async def run():
        af = await tensogram.AsyncTensogramFile.open(path)
        pending = af.file_decode_object_batch([0], 0)
        with pytest.raises(OSError, match="^batch object decode requires a remote backend$"):
            await pending

    asyncio.run(run())


# ---- §1.9 StreamingEncoder ----------------------------------------------------------------------------

def test_finished_encoder_converts_first():
    enc = tensogram.StreamingEncoder({})
    enc.finish()
    # write_object converts descriptor and data before refusing ...
    _raises(ValueError, "data must be a numpy array or bytes", lambda: enc.write_object(D, "x"))
    _raises(RuntimeError, "StreamingEncoder already finished", lambda: enc.write_object(D, A))
    # ... write_object_pre_encoded only the descriptor
    _raises(ValueError, "descriptor missing 'type'", lambda: enc.write_object_pre_encoded({}, "x"))
    _raises(RuntimeError, "StreamingEncoder already finished", lambda: enc.write_object_pre_encoded(D, "x"))
    _raises(RuntimeError, "StreamingEncoder already finished", lambda: enc.finish())


# ---- §1.11 the descriptor warning -------------------------------------------------------------------

WARNING = ("descriptor contains application-metadata-like keys ('units', 'name') that were captured into "
           "DataObjectDescriptor.params.  Application metadata belongs in meta['base'][i] — placing it in the "
           "descriptor dict works (xarray/zarr fall back to descriptor params) but is not canonical and may "
           "produce unexpected results in downstream tools. See examples/python/02b_generic_metadata.py for the "
           "recommended pattern.")


def test_warning_text_and_caller_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tensogram.encode({}, [({**D, "units": "K", "name": "t", "Name": 1}, A), (D, A)]); line = _line()  # noqa: E702
    assert len(caught) == 1
    w = caught[0]
    assert w.category is UserWarning and str(w.message) == WARNING
    assert os.path.basename(w.filename) == "test_parity_errors.py" and w.lineno == line


def _line():
    import inspect

    return inspect.currentframe().f_back.f_lineno


def test_warning_under_error_filter_stops_the_encode():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning):
            tensogram.encode({}, [({**D, "units": "K", "name": "t"}, A)])


def test_one_warning_per_descriptor_even_if_encode_fails():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError):
            tensogram.encode({}, [({**D, "units": "K"}, A), ({**D, "mars": {}}, np.ones(3, np.float32))])
    assert len(caught) == 2


# ---- §1.10 converters ---------------------------------------------------------------------------------

@pytest.mark.skipif(not tensogram.__has_grib__, reason="built without the importers")
def test_converter_errors(fixtures_dir, tmp_path):
    grib = str(fixtures_dir / "grib" / "2t.grib2")
    _raises(ValueError, 'grouping must be \'one_to_one\' or \'merge_all\', got "x\\"y"',
            lambda: tensogram.convert_grib(grib, grouping='x"y'))
    _raises(ValueError, "split_by must be 'file', 'variable' or 'record', got \"rows\"",
            lambda: tensogram.convert_netcdf(str(fixtures_dir / "netcdf" / "cf_temperature.nc"), split_by="rows"))
    # options are checked before the path
    _raises(ValueError, "split_by must be 'file', 'variable' or 'record', got \"rows\"",
            lambda: tensogram.convert_netcdf("/nonexistent.nc", split_by="rows"))
    for call, path in ((tensogram.convert_grib, "/nonexistent.grib"), (tensogram.convert_netcdf, "/nonexistent.nc")):
        e = _raises(FileNotFoundError, f"no such file: {path}", lambda: call(path))
        assert e.errno is None
    _raises(ValueError, "convert_grib_buffer expects a bytes-like object (bytes, bytearray, memoryview, "
                        "numpy.uint8[:])", lambda: tensogram.convert_grib_buffer("GRIB", grouping="bogus"))
    _raises(ValueError, "invalid netcdf data: to-netcdf: no messages to write",
            lambda: tensogram.to_netcdf([], str(tmp_path / "x.nc")))
    assert tensogram.to_grib([]) == b""


def test_with_blocks_close_nothing(tmp_path):
    import asyncio

    path = str(tmp_path / "w.tgm")
    with tensogram.TensogramFile.create(path) as f:
        f.append({}, [(D, A)])
    assert not f.closed
    with tensogram.TensogramFile.open(path) as f:
        assert f.__exit__(None, None, None) is False
    assert len(f) == 1 and f[0].objects[0][1].tolist() == [1.0, 1.0]   # still usable (spec 08 §1.8)

    async def run():
        async with await tensogram.AsyncTensogramFile.open(path) as af:
            pass
        assert await af.message_count() == 1

    asyncio.run(run())


# ---- §1.2 compute_packing_params ---------------------------------------------------------------------

@pytest.mark.parametrize("values, bits, text", [
    ([1.0, float("nan")], 16, "NaN value encountered at index 1"),
    ([1.0, 2.0, float("-inf")], 16, "infinite value encountered at index 2"),
    ([1.0, 2.0], 65, "bits_per_value 65 exceeds maximum of 64"),
])
def test_packing_errors_have_no_prefix(values, bits, text):
    _raises(ValueError, text, lambda: tensogram.compute_packing_params(np.array(values), bits, 0))


@pytest.mark.parametrize("threads, cls, text", [
    (-1, OverflowError, "out of range integral type conversion attempted"),
    (2**32, OverflowError, "out of range integral type conversion attempted"),
    (2**70, OverflowError, "Python int too large to convert to C long"),
    ("2", TypeError, "argument 'threads': 'str' object cannot be interpreted as an integer"),
    (1.0, TypeError, "argument 'threads': 'float' object cannot be interpreted as an integer"),
])
def test_threads_conversion_errors(threads, cls, text):
    msg = tensogram.encode({}, [(D, A)], threads=np.int64(2))
    _raises(cls, text, lambda: tensogram.encode({}, [(D, A)], threads=threads))
    _raises(cls, text, lambda: tensogram.decode(msg, threads=threads))
    _raises(cls, text, lambda: tensogram.StreamingEncoder({}, threads=threads))


# ---- §1.12 bool parameters take bool or numpy.bool_ only ------------------------------------------

def _bool_calls(tmp_path):
    msg = tensogram.encode({}, [(D, A)])
    path = str(tmp_path / "b.tgm")
    with tensogram.TensogramFile.create(path) as f:
        f.append({}, [(D, A)])
    f = tensogram.TensogramFile.open(path)
    enc = lambda **kw: tensogram.encode({}, [(D, A)], **kw)        # noqa: E731
    return [
        ("native_byte_order", lambda v: tensogram.decode(msg, native_byte_order=v)),
        ("restore_non_finite", lambda v: tensogram.decode(msg, restore_non_finite=v)),
        ("verify_hash", lambda v: tensogram.decode(msg, verify_hash=v)),
        ("native_byte_order", lambda v: tensogram.decode_object(msg, 0, native_byte_order=v)),
        ("join", lambda v: tensogram.decode_range(msg, 0, [(0, 1)], join=v)),
        ("restore_non_finite", lambda v: tensogram.decode_range(msg, 0, [(0, 1)], restore_non_finite=v)),
        ("verify_hash", lambda v: list(tensogram.iter_messages(msg, verify_hash=v))),
        ("check_canonical", lambda v: tensogram.validate(msg, check_canonical=v)),
        ("check_canonical", lambda v: tensogram.validate_file(path, check_canonical=v)),
        ("allow_nan", lambda v: enc(allow_nan=v)),
        ("allow_inf", lambda v: enc(allow_inf=v)),
        ("allow_inf", lambda v: tensogram.StreamingEncoder({}, allow_inf=v)),
        ("allow_nan", lambda v: f.append({}, [(D, A)], allow_nan=v)),
        ("verify_hash", lambda v: f.decode_message(0, verify_hash=v)),
        ("native_byte_order", lambda v: f.file_decode_object(0, 0, native_byte_order=v)),
        ("join", lambda v: f.file_decode_range(0, 0, [(0, 1)], join=v)),
    ]


def test_bool_parameters_reject_ints_and_none(tmp_path):
    for param, call in _bool_calls(tmp_path):
        for bad, shown in [(0, "'int' object"), (1, "'int' object"), (None, "'None'"), ("yes", "'str' object"),
                           (np.int8(1), "'int8' object")]:
            _raises(TypeError, f"argument '{param}': {shown} is not an instance of 'bool'", lambda: call(bad))
        call(False)
        call(np.bool_(True))


def test_bool_parameter_of_converters(fixtures_dir):
    if not tensogram.__has_grib__:
        pytest.skip("built without the converters")
    grib = next(iter(sorted(fixtures_dir.glob("**/*.grib*"))), None)
    if grib is None:
        pytest.skip("no GRIB fixture")
    _raises(TypeError, "argument 'preserve_all_keys': 'int' object is not an instance of 'bool'",
            lambda: tensogram.convert_grib(str(grib), preserve_all_keys=1))
    _raises(TypeError, "argument 'cf': 'None' is not an instance of 'bool'",
            lambda: tensogram.convert_netcdf(str(grib), cf=None))
    assert tensogram.convert_grib(str(grib), preserve_all_keys=np.bool_(False))


def test_metadata_integers_beyond_int64_read_back_exactly():
    # Kept deviation (docs/python.md): the reference raises "CBOR integer <n> out of i64 range".
    msg = tensogram.encode({"base": [{"big": 2 ** 64 - 1, "edge": 2 ** 63}], "_extra_": {"small": -2 ** 63}},
                           [(D, A)])
    meta = tensogram.decode_metadata(msg)
    assert meta["big"] == 2 ** 64 - 1 and meta["edge"] == 2 ** 63 and meta.extra["small"] == -2 ** 63
    assert meta.base[0]["big"] == 2 ** 64 - 1


# ---- §1.12 argument counts, keywords and kinds: CPython's texts, as PyO3 gives them ----------------

def test_argument_count_and_keyword_texts(tmp_path):
    msg = tensogram.encode({}, [(D, A)])
    path = str(tmp_path / "a.tgm")
    with tensogram.TensogramFile.create(path) as f:
        f.append({}, [(D, A)])
    f = tensogram.TensogramFile.open(path)
    _raises(TypeError, "decode() missing 1 required positional argument: 'buf'", lambda: tensogram.decode())
    _raises(TypeError, "decode() takes from 1 to 5 positional arguments but 6 were given",
            lambda: tensogram.decode(msg, True, 0, True, False, 7))
    _raises(TypeError, "decode() got an unexpected keyword argument 'bogus'", lambda: tensogram.decode(msg, bogus=1))
    _raises(TypeError, "decode_range() missing 1 required positional argument: 'ranges'",
            lambda: tensogram.decode_range(msg, 0))
    _raises(TypeError, "TensogramFile.open() missing 1 required positional argument: 'source'",
            lambda: tensogram.TensogramFile.open())
    _raises(TypeError, "TensogramFile.open() takes 1 positional argument but 2 were given",
            lambda: tensogram.TensogramFile.open(path, False))
    _raises(TypeError, "TensogramFile.decode_message() got an unexpected keyword argument 'idx'",
            lambda: f.decode_message(idx=0))
    _raises(TypeError, "StreamingEncoder.write_object() missing 2 required positional arguments: "
            "'descriptor_dict' and 'data'", lambda: tensogram.StreamingEncoder({}).write_object())
    _raises(TypeError, "argument 'index': 'str' object cannot be interpreted as an integer",
            lambda: tensogram.decode_object(msg, "0"))
    _raises(TypeError, "argument 'msg_index': 'float' object cannot be interpreted as an integer",
            lambda: f.file_decode_object(0.5, 0))
    _raises(TypeError, "argument 'level': 'int' object is not an instance of 'str'",
            lambda: tensogram.validate(msg, level=3))
    # Successful calls are untouched: same results, numpy bools and keywords work.
    assert tensogram.decode(msg, native_byte_order=np.bool_(True)).objects[0][1].tolist() == [1.0, 1.0]
    assert f.decode_message(0).objects[0][1].tolist() == [1.0, 1.0]
