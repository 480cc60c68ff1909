"""Round trips of every dtype through every pipeline (spec 02 §5, spec 03, spec 04 B.4).

Lossless pipelines must give back the exact bytes; lossy ones (simple_packing,
zfp, sz3) must stay within their error bound. Combinations the format does not
allow (zfp, sz3 or simple_packing on anything but float64, szip on elements wider
than 32 bits) must raise ValueError with the library's message, never
produce data.
"""

import numpy as np
import pytest

import tensogram

DTYPES = [
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bitmask",
]  # fmt: skip

WIDTH = {"float16": 2, "bfloat16": 2, "complex64": 8, "complex128": 16, "bitmask": 0}

SZIP = {"szip_rsi": 128, "szip_block_size": 16, "szip_flags": 8}

PIPELINES = {
    "none": {},
    "zstd": {"compression": "zstd", "zstd_level": 3},
    "lz4": {"compression": "lz4"},
    "blosc2": {"compression": "blosc2"},
    "blosc2-zstd": {"compression": "blosc2", "blosc2_codec": "zstd", "blosc2_clevel": 5},
    "szip": {"compression": "szip", **SZIP},
    "shuffle": {"filter": "shuffle"},
    "shuffle+zstd": {"filter": "shuffle", "compression": "zstd"},
    "shuffle+lz4": {"filter": "shuffle", "compression": "lz4"},
    "simple_packing16": {"encoding": "simple_packing", "sp_bits_per_value": 16},
    "simple_packing24+szip": {"encoding": "simple_packing", "sp_bits_per_value": 24, "compression": "szip", **SZIP},
    "simple_packing32+zstd": {"encoding": "simple_packing", "sp_bits_per_value": 32, "compression": "zstd"},
    "zfp-rate": {"compression": "zfp", "zfp_mode": "fixed_rate", "zfp_rate": 24},
    "zfp-accuracy": {"compression": "zfp", "zfp_mode": "fixed_accuracy", "zfp_tolerance": 1e-3},
    "zfp-precision": {"compression": "zfp", "zfp_mode": "fixed_precision", "zfp_precision": 32},
    "sz3-abs": {"compression": "sz3", "sz3_error_bound_mode": "abs", "sz3_error_bound": 1e-3},
    "sz3-rel": {"compression": "sz3", "sz3_error_bound_mode": "rel", "sz3_error_bound": 1e-5},
    "sz3-psnr": {"compression": "sz3", "sz3_error_bound_mode": "psnr", "sz3_error_bound": 80.0},
    "rle": {"compression": "rle"},
    "roaring": {"compression": "roaring"},
}

SHAPE = [6, 35]  # 210 elements: not a multiple of any block size


def width(dtype: str) -> int:
    return WIDTH[dtype] if dtype in WIDTH else np.dtype(dtype).itemsize


def sample(dtype: str, rng: np.random.Generator) -> bytes:
    """Finite sample data of `dtype` for SHAPE, as raw native-order bytes."""
    n = int(np.prod(SHAPE))
    if dtype == "bitmask":
        return rng.integers(0, 256, (n + 7) // 8, dtype=np.uint8).tobytes()
    if dtype == "bfloat16":  # the upper halves of float32 values
        return (np.linspace(-3.0, 3.0, n, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16).tobytes()
    if dtype.startswith("complex"):
        real = np.dtype(dtype).type(0).real.dtype
        z = np.linspace(-1, 1, n).astype(real) + 1j * np.linspace(2, 3, n).astype(real)
        return z.astype(dtype).tobytes()
    if dtype.startswith("float"):
        # smooth field in the range of temperatures (spec 04 bench data)
        x = np.linspace(0, 4 * np.pi, n)
        return (280.0 + 30.0 * np.sin(x)).astype(dtype).tobytes()
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True).tobytes()


def expected_error(dtype: str, pipeline: dict):
    """The message fragment of the error a disallowed combination gives, or None."""
    if pipeline.get("encoding") == "simple_packing" and dtype != "float64":
        return "simple_packing only supports float64"
    if pipeline.get("compression") in ("zfp", "sz3") and dtype != "float64":
        return f"{pipeline['compression']} compresses float64 data only"
    compression = pipeline.get("compression")
    if compression in ("rle", "roaring") and dtype != "bitmask":
        return f'compression "{compression}" only supports dtype=bitmask'
    # spec 03 §6 error table: bitmask has element width 0
    if compression == "szip" and pipeline.get("encoding") != "simple_packing" and not 1 <= width(dtype) <= 4:
        return "szip error: bits_per_sample must be 1..=32"
    if compression == "blosc2" and dtype == "bitmask":
        return "typesize 0"
    return None


def descriptor(dtype: str, pipeline: dict) -> dict:
    d = {"type": "ntensor", "shape": SHAPE, "dtype": dtype, **pipeline}
    if d.get("filter") == "shuffle":
        d["shuffle_element_size"] = max(1, width(dtype))
    return d


@pytest.mark.parametrize("pipeline_name", list(PIPELINES))
@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip(dtype, pipeline_name, rng):
    pipeline = PIPELINES[pipeline_name]
    raw = sample(dtype, rng)
    desc = descriptor(dtype, pipeline)
    error = expected_error(dtype, pipeline)
    if error is not None:
        with pytest.raises(ValueError, match=error):
            tensogram.encode({}, [(desc, raw)])
        return

    msg = tensogram.encode({"base": [{"name": f"{dtype}-{pipeline_name}"}]}, [(desc, raw)])
    meta, objects = tensogram.decode(msg, verify_hash=True)
    assert meta["name"] == f"{dtype}-{pipeline_name}"
    (d, arr), = objects
    assert d.dtype == dtype and d.shape == SHAPE
    assert d.encoding == pipeline.get("encoding", "none")
    assert d.compression == pipeline.get("compression", "none")

    lossy = pipeline.get("encoding") == "simple_packing" or pipeline.get("compression") in ("zfp", "sz3")
    if dtype == "bitmask":
        assert arr.dtype == np.uint8 and arr.shape == (len(raw),)
        assert arr.tobytes() == raw
    elif lossy:
        original = np.frombuffer(raw, dtype=np.float64).reshape(SHAPE)
        assert arr.dtype == np.float64 and arr.shape == tuple(SHAPE)
        span = float(original.max() - original.min())
        bound = {
            "simple_packing16": span / 2**16,
            "simple_packing24+szip": span / 2**24,
            "simple_packing32+zstd": span / 2**32 * 4,
            "zfp-rate": 1e-2,
            "zfp-accuracy": 1e-3,
            "zfp-precision": 1e-4,
            "sz3-abs": 1e-3,
            "sz3-rel": 1e-5 * span,
            # SZ3's bound for a PSNR target p (docs/sz3-format.md §7); numpy may round
            # this formula one ulp below the library, hence the 1e-12 slack
            "sz3-psnr": span * 10 ** (-(80.0 + 10 * np.log10(1 - 2 / 3 * 0.99)) / 20) * (1 + 1e-12),
        }[pipeline_name]
        assert np.max(np.abs(arr - original)) <= bound
    else:
        expected_np = "uint16" if dtype == "bfloat16" else dtype
        assert arr.dtype == np.dtype(expected_np)
        assert arr.shape == tuple(SHAPE)
        assert arr.tobytes() == raw


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint64", "complex64", "float16", "int8"])
def test_numpy_arrays_of_every_numpy_dtype_are_accepted(dtype, rng):
    raw = sample(dtype, rng)
    arr = np.frombuffer(raw, dtype=dtype).reshape(SHAPE)
    msg = tensogram.encode({}, [({"type": "ntensor", "shape": SHAPE, "dtype": dtype}, arr)])
    out = tensogram.decode(msg).objects[0][1]
    np.testing.assert_array_equal(out, arr)


def test_big_endian_arrays_keep_their_values():
    values = np.linspace(-5, 5, 50).astype(">f8")
    msg = tensogram.encode({}, [({"type": "ntensor", "shape": [50], "dtype": "float64"}, values)])
    d, out = tensogram.decode(msg).objects[0]
    assert d.byte_order == "big"  # the array's own order was declared
    np.testing.assert_array_equal(out, values)
    assert out.dtype.isnative

    raw = tensogram.decode(msg, native_byte_order=False).objects[0][1]
    # Spec 08 §5: the wire-order bytes under the native dtype, so on a
    # little-endian host the values read byte-swapped.
    assert raw.dtype.isnative and raw.dtype == np.dtype("float64")
    assert raw.tobytes() == values.tobytes()
    np.testing.assert_array_equal(raw.view(">f8"), values)


def test_explicit_byte_order_with_raw_bytes():
    values = np.arange(10, dtype=">i4")
    msg = tensogram.encode({}, [({"type": "ntensor", "shape": [10], "dtype": "int32", "byte_order": "big"},
                                 values.tobytes())])
    np.testing.assert_array_equal(tensogram.decode(msg).objects[0][1], np.arange(10))


def test_multi_object_message_mixed_pipelines(rng):
    a = rng.standard_normal((4, 5)).astype(np.float32)
    b = rng.integers(0, 1000, 17, dtype=np.int64)
    c = np.linspace(250.0, 310.0, 300)
    msg = tensogram.encode(
        {"base": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
        [
            ({"type": "ntensor", "shape": [4, 5], "dtype": "float32", "compression": "lz4"}, a),
            ({"type": "ntensor", "shape": [17], "dtype": "int64"}, b),
            ({"type": "ntensor", "shape": [300], "dtype": "float64", "encoding": "simple_packing",
              "sp_bits_per_value": 24, "compression": "szip", **SZIP}, c),
        ],
    )  # fmt: skip
    meta, objects = tensogram.decode(msg)
    assert [o["name"] for o in meta.base] == ["a", "b", "c"]
    np.testing.assert_array_equal(objects[0][1], a)
    np.testing.assert_array_equal(objects[1][1], b)
    np.testing.assert_allclose(objects[2][1], c, atol=60 / 2**24)
    # decode_object finds the same object through the index frame
    _, d, arr = tensogram.decode_object(msg, 2)
    np.testing.assert_array_equal(arr, objects[2][1])
    assert d.params["sp_bits_per_value"] == 24


@pytest.mark.parametrize("pipeline_name", ["none", "szip", "blosc2", "simple_packing24+szip", "zfp-rate"])
def test_decode_range_matches_full_decode(pipeline_name):
    values = np.linspace(250.0, 310.0, 5000)
    desc = descriptor("float64", PIPELINES[pipeline_name])
    desc["shape"] = [5000]
    if pipeline_name == "szip":
        desc["dtype"] = "int32"
        values = np.arange(5000, dtype=np.int32) * 7
    msg = tensogram.encode({}, [(desc, values)])
    full = tensogram.decode(msg).objects[0][1]
    ranges = [(0, 10), (1234, 100), (4990, 10)]
    parts = tensogram.decode_range(msg, 0, ranges)
    for (start, count), part in zip(ranges, parts):
        assert part.shape == (count,)
        if pipeline_name == "zfp-rate":  # blocks of 4 decode independently, same values
            np.testing.assert_allclose(part, full[start : start + count], atol=1e-9)
        else:
            np.testing.assert_array_equal(part, full[start : start + count])
    joined = tensogram.decode_range(msg, 0, ranges, join=True)
    np.testing.assert_array_equal(joined, np.concatenate(parts))


@pytest.mark.parametrize("pipeline_name", ["zstd", "lz4", "shuffle"])
def test_decode_range_refuses_stream_codecs_and_shuffle(pipeline_name):
    desc = descriptor("float64", PIPELINES[pipeline_name])
    desc["shape"] = [100]
    msg = tensogram.encode({}, [(desc, np.zeros(100))])
    with pytest.raises(ValueError):
        tensogram.decode_range(msg, 0, [(0, 10)])


def test_nan_and_inf_round_trip_through_masks():
    values = np.linspace(0, 1, 100)
    values[[3, 50]] = np.nan
    values[7] = np.inf
    values[8] = -np.inf
    desc = {"type": "ntensor", "shape": [100], "dtype": "float64", "compression": "zstd"}
    with pytest.raises(ValueError, match="EncodingError: .*NaN"):
        tensogram.encode({}, [(desc, values)])
    msg = tensogram.encode({}, [(desc, values)], allow_nan=True, allow_inf=True)
    out = tensogram.decode(msg).objects[0][1]
    np.testing.assert_array_equal(out, values)  # NaN positions equal too
    stored = tensogram.decode(msg, restore_non_finite=False).objects[0][1]
    assert np.isfinite(stored).all() and stored[3] == 0.0 and stored[7] == 0.0


def test_simple_packing_params_spread_into_a_descriptor():
    values = np.linspace(250.0, 310.0, 1000)
    params = tensogram.compute_packing_params(values, 16, 0)
    assert params["sp_bits_per_value"] == 16
    desc = {"type": "ntensor", "shape": [1000], "dtype": "float64", "encoding": "simple_packing", **params}
    msg = tensogram.encode({}, [(desc, values)])
    d, out = tensogram.decode(msg).objects[0]
    assert d.params["sp_reference_value"] == params["sp_reference_value"]
    np.testing.assert_allclose(out, values, atol=60 / 2**16)
