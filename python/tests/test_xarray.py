"""Tests of the ``tensogram`` xarray engine (spec 04 Part E.1).

Data is written with the ``tensogram`` module into tmp_path; the reference
fixtures in /work/shared/fixtures/tgm are opened in place.  Module calls are
observed by replacing ``tensogram_xarray._files.open_file`` (the one place the
engine opens files) with a proxy that records every call.
"""

from __future__ import annotations

import importlib.metadata
import os
import pickle
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import xarray as xr

import tensogram
import tensogram_xarray
from tensogram_xarray import _files
from tensogram_xarray.array import TensogramBackendArray, flat_runs, supports_range_decode
from tensogram_xarray.backend import TensogramBackendEntrypoint

from xarray_helpers import CountingFile, desc, names, payload_calls, write_tgm

FIXTURES = Path("/work/shared/fixtures/tgm")


@pytest.fixture
def calls(monkeypatch):
    """Record every ``TensogramFile`` call the engine makes during a test."""
    recorded: list = []
    real_open = _files.open_file

    def counting_open(source, storage_options=None):
        return CountingFile(real_open(source, storage_options), recorded)

    _files.clear_file_cache()
    monkeypatch.setattr(_files, "open_file", counting_open)
    yield recorded
    _files.clear_file_cache()


@pytest.fixture(autouse=True)
def _fresh_cache():
    _files.clear_file_cache()
    yield
    _files.clear_file_cache()


def reference_values(path, msg, obj):
    """Values as the module itself decodes them (independent of the engine)."""
    f = tensogram.TensogramFile.open(str(path))
    return np.asarray(f.file_decode_object(msg, obj)["data"])


# ---------------------------------------------------------------------------
# Registration and guess_can_open
# ---------------------------------------------------------------------------


def test_engine_registered_through_entry_point():
    eps = importlib.metadata.entry_points(group="xarray.backends")
    ours = [ep for ep in eps if ep.name == "tensogram"]
    assert len(ours) == 1
    assert ours[0].load() is TensogramBackendEntrypoint
    engines = xr.backends.list_engines()
    assert "tensogram" in engines
    assert isinstance(engines["tensogram"], TensogramBackendEntrypoint)


def test_guess_can_open(tmp_path):
    entry = TensogramBackendEntrypoint()
    assert entry.guess_can_open("data.tgm")
    assert entry.guess_can_open("DATA.TGM")
    assert entry.guess_can_open(Path("/x/y/file.tgm"))
    assert entry.guess_can_open("s3://bucket/key/file.tgm")
    assert not entry.guess_can_open("data.nc")
    assert not entry.guess_can_open("data.tgm.bak")
    assert not entry.guess_can_open(object())
    # With no engine given, xarray picks ours for a .tgm path.
    path = write_tgm(tmp_path / "g.tgm", [({"base": [{"name": "v"}]}, [(desc([3]), np.arange(3, dtype="f4"))])])
    ds = xr.open_dataset(path)
    np.testing.assert_array_equal(ds["v"].values, [0, 1, 2])


# ---------------------------------------------------------------------------
# Real fixtures
# ---------------------------------------------------------------------------


def test_multi_message_fixture_open_select_compute():
    path = FIXTURES / "multi_message.tgm"
    n = len(tensogram.TensogramFile.open(str(path)))
    assert n == 2
    for msg in range(n):
        ds = xr.open_dataset(path, engine="tensogram", message_index=msg)
        assert list(ds.data_vars) == ["object_0"]
        var = ds["object_0"]
        assert var.dims == ("dim_0",)
        assert var.dtype == np.float32
        expected = reference_values(path, msg, 0)
        np.testing.assert_array_equal(var.values, expected)
        # selection and computation on the lazy variable
        assert float(var.isel(dim_0=1)) == expected[1]
        assert float(var.sum()) == float(expected.sum())
        assert var.attrs == {"product": "efi", "parameter": "pressure"}
        assert ds.attrs == {"tensogram_wire_version": 3}
    values = [xr.open_dataset(path, engine="tensogram", message_index=m)["object_0"].values for m in range(n)]
    np.testing.assert_array_equal(values[0], [1.0, 2.0])
    np.testing.assert_array_equal(values[1], [3.0, 4.0])


def test_message_index_out_of_range_names_index_and_count():
    path = FIXTURES / "multi_message.tgm"
    with pytest.raises((IndexError, ValueError)) as err:
        xr.open_dataset(path, engine="tensogram", message_index=2)
    text = str(err.value)
    assert "2" in text and "holds 2 message" in text
    with pytest.raises((IndexError, ValueError)):
        xr.open_dataset(path, engine="tensogram", message_index=-1)


def test_mars_metadata_fixture():
    path = FIXTURES / "mars_metadata.tgm"
    ds = xr.open_dataset(path, engine="tensogram")
    assert list(ds.data_vars) == ["object_0"]
    var = ds["object_0"]
    assert var.dims == ("dim_0", "dim_1")
    assert var.shape == (2, 3)
    np.testing.assert_array_equal(var.values, reference_values(path, 0, 0))
    np.testing.assert_array_equal(var.values, [[1, 2, 3], [4, 5, 6]])
    assert var.attrs["mars"] == {"step": 12, "type": "fc", "class": "od"}
    assert "_reserved_" not in var.attrs
    assert ds.attrs["tensogram_wire_version"] == 3


def test_metadata_parity_fixture_names_attrs_and_clash_renaming():
    path = FIXTURES / "metadata_parity.tgm"
    ds = xr.open_dataset(path, engine="tensogram")
    # shortName names the variables (no name / mars.param / param present)
    assert list(ds.data_vars) == ["2t", "msl"]
    # dim_0 would be size 2 for object 0 and size 4 for object 1: renamed;
    # dim_1 is only used with size 3: kept.
    assert ds["2t"].dims == ("obj_0_dim_0", "dim_1")
    assert ds["msl"].dims == ("obj_1_dim_0",)
    assert ds.attrs == {"source": "parity-fixture", "tensogram_wire_version": 3}
    assert ds["2t"].attrs["levels"] == [1000, 850, 500]
    assert ds["2t"].attrs["mars"] == {"class": "od", "stream": "oper"}
    assert ds["msl"].attrs["mars"] == {"class": "ea"}
    np.testing.assert_array_equal(ds["2t"].values, reference_values(path, 0, 0))
    np.testing.assert_array_equal(ds["msl"].values, reference_values(path, 0, 1))


def test_multi_object_fixture_variable_key():
    path = FIXTURES / "multi_object.tgm"
    ds = xr.open_dataset(path, engine="tensogram", variable_key="parameter")
    assert list(ds.data_vars) == ["temperature", "pressure", "humidity"]
    assert ds["temperature"].dims == ("obj_0_dim_0",)
    assert ds["pressure"].dims == ("obj_1_dim_0",)
    assert ds["humidity"].dims == ("obj_2_dim_0",)
    for i, name in enumerate(["temperature", "pressure", "humidity"]):
        expected = reference_values(path, 0, i)
        assert ds[name].dtype == expected.dtype
        np.testing.assert_array_equal(ds[name].values, expected)
    np.testing.assert_array_equal(ds["pressure"].values, [100, -200, 300])


# ---------------------------------------------------------------------------
# Laziness
# ---------------------------------------------------------------------------


def test_open_reads_no_payload(tmp_path, calls):
    a = np.arange(24, dtype="f4").reshape(4, 6)
    b = np.arange(5, dtype="i8")
    path = write_tgm(
        tmp_path / "lazy.tgm",
        [
            ({"base": [{"name": "skip"}]}, [(desc([2]), np.zeros(2, "f4"))]),
            ({"base": [{"name": "a"}, {"name": "b"}]}, [(desc([4, 6]), a), (desc([5], "int64"), b)]),
        ],
    )
    ds = xr.open_dataset(path, engine="tensogram", message_index=1)
    assert payload_calls(calls) == []
    assert names(calls).count("file_decode_descriptors") == 1
    assert ("file_decode_descriptors", (1,), {}) in calls
    assert ds["a"].shape == (4, 6) and ds["a"].dtype == np.float32
    assert payload_calls(calls) == []

    np.testing.assert_array_equal(ds["a"].values, a)
    decoded = payload_calls(calls)
    assert [(c[0], c[1][:2]) for c in decoded] == [("file_decode_object", (1, 0))]
    np.testing.assert_array_equal(ds["b"].values, b)
    assert [(c[0], c[1][:2]) for c in payload_calls(calls)][-1] == ("file_decode_object", (1, 1))


# ---------------------------------------------------------------------------
# Coordinates and dimension names
# ---------------------------------------------------------------------------


def _coord_file(tmp_path):
    lat = np.array([10.0, 20.0, 30.0])
    lon = np.array([0.0, 90.0, 180.0, 270.0])
    step = np.array([0, 6], dtype="int32")
    temp = np.arange(24, dtype="f4").reshape(2, 3, 4)
    path = write_tgm(
        tmp_path / "coords.tgm",
        [
            (
                {
                    "base": [
                        {"name": "lat", "units": "degrees_north"},
                        {"param": "LON"},
                        {"mars": {"param": "step"}},
                        {"name": "temperature", "units": "K"},
                    ]
                },
                [
                    (desc([3], "float64"), lat),
                    (desc([4], "float64"), lon),
                    (desc([2], "int32"), step),
                    (desc([2, 3, 4]), temp),
                ],
            )
        ],
    )
    return path, lat, lon, step, temp


def test_coordinates_detected(tmp_path, calls):
    path, lat, lon, step, temp = _coord_file(tmp_path)
    ds = xr.open_dataset(path, engine="tensogram")
    assert set(ds.coords) == {"latitude", "longitude", "step"}
    assert list(ds.data_vars) == ["temperature"]
    assert ds["temperature"].dims == ("step", "latitude", "longitude")
    np.testing.assert_array_equal(ds["latitude"].values, lat)
    np.testing.assert_array_equal(ds["longitude"].values, lon)
    np.testing.assert_array_equal(ds["step"].values, step)
    assert ds["latitude"].attrs == {"name": "lat", "units": "degrees_north"}
    # xarray builds indexes from coordinates; the data variable stays lazy.
    assert all(c[1][1] != 3 for c in payload_calls(calls))
    sel = ds["temperature"].sel(latitude=20.0, longitude=180.0)
    np.testing.assert_array_equal(sel.values, temp[:, 1, 2])


def test_two_dimensional_object_named_like_coordinate_stays_variable(tmp_path):
    path = write_tgm(
        tmp_path / "x2d.tgm",
        [({"base": [{"name": "x"}]}, [(desc([2, 2]), np.ones((2, 2), "f4"))])],
    )
    ds = xr.open_dataset(path, engine="tensogram")
    assert list(ds.data_vars) == ["x"]
    assert len(ds.coords) == 0


def test_dim_names_argument(tmp_path):
    path = write_tgm(
        tmp_path / "dn.tgm",
        [({"base": [{"name": "v"}]}, [(desc([2, 3]), np.arange(6, dtype="f4").reshape(2, 3))])],
    )
    ds = xr.open_dataset(path, engine="tensogram", dim_names=["row", "col"])
    assert ds["v"].dims == ("row", "col")
    with pytest.raises(ValueError, match=r"dim_names has 1 entries .* 2 dimension"):
        xr.open_dataset(path, engine="tensogram", dim_names=["row"])


def test_dim_names_from_base_and_extra(tmp_path):
    a = np.zeros((2, 3), "f4")
    b = np.zeros((3, 5), "f4")
    path = write_tgm(
        tmp_path / "hints.tgm",
        [
            (
                {
                    "base": [{"name": "a", "dim_names": ["row", "col"]}, {"name": "b"}],
                    "_extra_": {"dim_names": {"3": "lev", "5": "member"}, "centre": "ecmwf"},
                },
                [(desc([2, 3]), a), (desc([3, 5]), b)],
            ),
            (
                {"base": [{"name": "c"}], "_extra_": {"dim_names": ["p", "q"]}},
                [(desc([4, 4]), np.zeros((4, 4), "f4"))],
            ),
            (
                {"base": [{"name": "d", "dim_names": ["same", "same"]}]},
                [(desc([4, 4]), np.zeros((4, 4), "f4"))],
            ),
        ],
    )
    ds = xr.open_dataset(path, engine="tensogram")
    assert ds["a"].dims == ("row", "col")  # base[i]["dim_names"] beats _extra_
    assert ds["b"].dims == ("lev", "member")  # {size: name} mapping
    assert "dim_names" not in ds["a"].attrs
    assert ds.attrs == {"centre": "ecmwf", "tensogram_wire_version": 3}
    ds2 = xr.open_dataset(path, engine="tensogram", message_index=1)
    assert ds2["c"].dims == ("p", "q")  # list form
    ds3 = xr.open_dataset(path, engine="tensogram", message_index=2)
    # base dim_names must be distinct per axis; otherwise it is ignored
    assert ds3["d"].dims == ("dim_0", "dim_1")


def test_coordinate_length_beats_base_dim_names(tmp_path):
    path = write_tgm(
        tmp_path / "prec.tgm",
        [
            (
                {"base": [{"name": "level"}, {"name": "v", "dim_names": ["lvl", "n"]}]},
                [(desc([3], "int32"), np.array([1000, 850, 500], "i4")), (desc([3, 2]), np.zeros((3, 2), "f4"))],
            )
        ],
    )
    ds = xr.open_dataset(path, engine="tensogram")
    assert ds["v"].dims == ("level", "n")


def test_generic_dims_shared_when_sizes_agree(tmp_path):
    path = write_tgm(
        tmp_path / "same.tgm",
        [
            (
                {"base": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
                [(desc([3]), np.zeros(3, "f4")), (desc([3]), np.ones(3, "f4")), (desc([3, 7]), np.zeros((3, 7), "f4"))],
            )
        ],
    )
    ds = xr.open_dataset(path, engine="tensogram")
    assert ds["a"].dims == ("dim_0",)
    assert ds["b"].dims == ("dim_0",)
    assert ds["c"].dims == ("dim_0", "dim_1")


def test_generic_dims_renamed_on_size_clash(tmp_path):
    path = write_tgm(
        tmp_path / "clash.tgm",
        [
            (
                {"base": [{"name": "a"}, {"name": "b"}]},
                [(desc([3, 4]), np.zeros((3, 4), "f4")), (desc([5, 4]), np.zeros((5, 4), "f4"))],
            )
        ],
    )
    ds = xr.open_dataset(path, engine="tensogram")
    assert ds["a"].dims == ("obj_0_dim_0", "dim_1")
    assert ds["b"].dims == ("obj_1_dim_0", "dim_1")


def test_variable_names_and_duplicates(tmp_path):
    path = write_tgm(
        tmp_path / "names.tgm",
        [
            (
                {
                    "base": [
                        {"mars": {"param": "2t", "shortName": "t2"}},
                        {"param": "msl", "shortName": "m"},
                        {"mars": {"shortName": "tp"}},
                        {"shortName": "sp"},
                        {"other": 1},
                        {"name": "dup"},
                        {"name": "dup"},
                    ]
                },
                [(desc([2]), np.full(2, i, "f4")) for i in range(7)],
            )
        ],
    )
    ds = xr.open_dataset(path, engine="tensogram")
    assert list(ds.data_vars) == ["2t", "msl", "tp", "sp", "object_4", "dup", "dup_1"]
    np.testing.assert_array_equal(ds["dup_1"].values, [6, 6])
    ds = xr.open_dataset(path, engine="tensogram", variable_key="mars.shortName")
    assert list(ds.data_vars)[:3] == ["t2", "msl", "tp"]
    ds = xr.open_dataset(path, engine="tensogram", drop_variables=["msl", "dup"])
    assert "msl" not in ds and "dup" not in ds and "2t" in ds


# ---------------------------------------------------------------------------
# Attributes
# ---------------------------------------------------------------------------


def test_attributes(tmp_path):
    data = np.linspace(0, 1, 50).astype("f8")
    path = write_tgm(
        tmp_path / "attrs.tgm",
        [
            (
                {
                    "base": [{"name": "t", "units": "K", "mars": {"class": "od"}, "dim_names": ["n"]}],
                    "_extra_": {"centre": "ecmwf", "dim_names": ["ignored"]},
                    "free": 7,
                },
                [(desc([50], "float64", encoding="simple_packing", sp_bits_per_value=16), data)],
            )
        ],
    )
    ds = xr.open_dataset(path, engine="tensogram")
    assert ds.attrs == {"centre": "ecmwf", "free": 7, "tensogram_wire_version": 3}
    attrs = ds["t"].attrs
    assert attrs["units"] == "K"
    assert attrs["mars"] == {"class": "od"}
    assert attrs["sp_bits_per_value"] == 16  # descriptor params fill absent keys
    assert "dim_names" not in attrs and "_reserved_" not in attrs
    assert ds["t"].dims == ("n",)
    assert ds["t"].dtype == np.float64  # simple_packing decodes to float64
    np.testing.assert_allclose(ds["t"].values, data, atol=1e-4)


def test_dtypes_follow_module_decode(tmp_path, calls):
    """Every dtype opens with the numpy dtype the module decodes to (B.4);
    bitmasks appear as their packed bytes and never take the range path."""
    ints = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
    pairs = [(desc([6], t), np.arange(6, dtype=t)) for t in ints + ["float32", "float64"]]
    pairs.append((desc([6], "float16"), np.arange(6, dtype="f2").tobytes()))
    pairs.append((desc([6], "bfloat16"), np.arange(6, dtype="u2").tobytes()))
    pairs.append((desc([6], "complex64"), (np.arange(6) + 1j).astype("c8").tobytes()))
    pairs.append((desc([6], "complex128"), (np.arange(6) - 2j).astype("c16").tobytes()))
    bits = np.array([1, 0, 1, 1, 0, 0, 0, 1, 1, 1], dtype=np.uint8)
    pairs.append((desc([10], "bitmask"), np.packbits(bits).tobytes()))
    f = tensogram.TensogramFile.create(str(tmp_path / "dtypes.tgm"))
    f.append({"base": [{"name": f"v{i}"} for i in range(len(pairs))]}, pairs)
    del f
    path = tmp_path / "dtypes.tgm"
    ds = xr.open_dataset(path, engine="tensogram")
    for i in range(len(pairs)):
        expected = reference_values(path, 0, i)
        var = ds[f"v{i}"]
        assert var.dtype == expected.dtype, f"object {i}"
        assert var.shape == expected.shape, f"object {i}"
        np.testing.assert_array_equal(var[1:3].values, expected[1:3])
    bitmask = ds[f"v{len(pairs) - 1}"]
    assert bitmask.shape == (2,) and bitmask.dtype == np.uint8
    np.testing.assert_array_equal(np.unpackbits(bitmask.values)[:10], bits)
    # the 2-of-6 reads were partial except for the bitmask (full decode)
    kinds = names(payload_calls(calls))
    assert kinds.count("file_decode_range") == len(pairs) - 1


# ---------------------------------------------------------------------------
# Range path vs full path
# ---------------------------------------------------------------------------


def test_flat_runs():
    shape = (4, 5)
    r = lambda *a: range(*a)  # noqa: E731
    # whole array: one run
    assert flat_runs([r(0, 4), r(0, 5)], shape) == [(0, 20)]
    # full rows 1..2: merged into one run
    assert flat_runs([r(1, 3), r(0, 5)], shape) == [(5, 10)]
    # partial columns: one run per row
    assert flat_runs([r(1, 3), r(2, 4)], shape) == [(7, 2), (12, 2)]
    # stepped columns: one element each, adjacent ones merged
    assert flat_runs([r(0, 1), r(0, 5, 2)], shape) == [(0, 1), (2, 1), (4, 1)]
    # 3-D, innermost partially-selected axis is axis 1
    assert flat_runs([r(0, 2), r(1, 2), r(0, 3)], (2, 2, 3)) == [(3, 3), (9, 3)]
    assert flat_runs([r(0, 0), r(0, 5)], shape) == []


def test_supports_range_decode_matrix():
    def d(**kw):
        base = dict(dtype="float32", filter="none", compression="none", params={})
        base.update(kw)
        return SimpleNamespace(**base)

    assert supports_range_decode(d())
    assert supports_range_decode(d(compression="szip"))
    assert supports_range_decode(d(compression="blosc2"))
    assert supports_range_decode(d(compression="zfp", params={"zfp_mode": "fixed_rate"}))
    assert not supports_range_decode(d(compression="zfp", params={"zfp_mode": "fixed_accuracy"}))
    assert not supports_range_decode(d(compression="zstd"))
    assert not supports_range_decode(d(compression="lz4"))
    assert not supports_range_decode(d(compression="sz3"))
    assert not supports_range_decode(d(filter="shuffle"))
    assert not supports_range_decode(d(dtype="bitmask"))


def _grid_file(tmp_path, dtype="float32", **options):
    data = np.arange(200, dtype=dtype).reshape(10, 20)
    path = write_tgm(tmp_path / "grid.tgm", [({"base": [{"name": "g"}]}, [(desc([10, 20], dtype, **options), data)])])
    return path, data


def test_small_selection_uses_decode_range(tmp_path, calls):
    path, data = _grid_file(tmp_path)
    ds = xr.open_dataset(path, engine="tensogram")
    out = ds["g"].isel(dim_0=slice(2, 4), dim_1=slice(5, 8)).values
    np.testing.assert_array_equal(out, data[2:4, 5:8])
    decoded = payload_calls(calls)
    assert len(decoded) == 1
    name, args, kwargs = decoded[0]
    assert name == "file_decode_range"
    assert args[:2] == (0, 0)
    assert [tuple(x) for x in args[2]] == [(45, 3), (65, 3)]
    assert kwargs.get("join") is True


def test_full_rows_selection_merged_into_one_run(tmp_path, calls):
    path, data = _grid_file(tmp_path)
    ds = xr.open_dataset(path, engine="tensogram")
    np.testing.assert_array_equal(ds["g"][3:6].values, data[3:6])
    (name, args, _), = payload_calls(calls)
    assert name == "file_decode_range"
    assert [tuple(x) for x in args[2]] == [(60, 60)]


def test_large_selection_uses_full_decode(tmp_path, calls):
    path, data = _grid_file(tmp_path)
    ds = xr.open_dataset(path, engine="tensogram")
    # 6 of 10 rows = 60 % >= 50 % threshold
    np.testing.assert_array_equal(ds["g"][0:6].values, data[0:6])
    assert names(payload_calls(calls)) == ["file_decode_object"]
    # exactly at the threshold (5 of 10 rows = 50 %) is not "below"
    ds = xr.open_dataset(path, engine="tensogram")
    np.testing.assert_array_equal(ds["g"][0:5].values, data[0:5])
    assert names(payload_calls(calls)) == ["file_decode_object", "file_decode_object"]


def test_range_threshold_argument(tmp_path, calls):
    path, data = _grid_file(tmp_path)
    ds = xr.open_dataset(path, engine="tensogram", range_threshold=0.9)
    np.testing.assert_array_equal(ds["g"][0:8].values, data[0:8])
    assert names(payload_calls(calls)) == ["file_decode_range"]
    ds = xr.open_dataset(path, engine="tensogram", range_threshold=0.0)
    np.testing.assert_array_equal(ds["g"][0:1, 0:1].values, data[0:1, 0:1])
    assert names(payload_calls(calls)) == ["file_decode_range", "file_decode_object"]


@pytest.mark.parametrize(
    "options",
    [
        {"compression": "zstd"},
        {"compression": "lz4"},
        {"filter": "shuffle", "shuffle_element_size": 4},
    ],
    ids=["zstd", "lz4", "shuffle"],
)
def test_stream_codecs_and_shuffle_use_full_decode(tmp_path, calls, options):
    path, data = _grid_file(tmp_path, **options)
    ds = xr.open_dataset(path, engine="tensogram")
    np.testing.assert_array_equal(ds["g"][1:2, 3:4].values, data[1:2, 3:4])
    assert names(payload_calls(calls)) == ["file_decode_object"]


def test_zfp_fixed_rate_uses_range_and_matches_full_decode(tmp_path, calls):
    # this implementation's zfp accepts float64 only (spec 03 table, row 9)
    path, data = _grid_file(tmp_path, "float64", compression="zfp", zfp_mode="fixed_rate", zfp_rate=16)
    ds = xr.open_dataset(path, engine="tensogram")
    part = ds["g"][2:4, 1:7].values
    assert names(payload_calls(calls)) == ["file_decode_range"]
    full = ds["g"].values
    assert names(payload_calls(calls)) == ["file_decode_range", "file_decode_object"]
    np.testing.assert_array_equal(part, full[2:4, 1:7])
    np.testing.assert_allclose(full, data, atol=0.5)


def test_simple_packing_range_path(tmp_path, calls):
    data = np.linspace(-5, 5, 200).reshape(10, 20)
    path = write_tgm(
        tmp_path / "sp.tgm",
        [({"base": [{"name": "p"}]}, [(desc([10, 20], "float64", encoding="simple_packing", sp_bits_per_value=24), data)])],
    )
    ds = xr.open_dataset(path, engine="tensogram")
    part = ds["p"][4, 2:9].values
    assert names(payload_calls(calls)) == ["file_decode_range"]
    assert part.dtype == np.float64 and ds["p"].dtype == np.float64
    full = ds["p"].values
    np.testing.assert_array_equal(part, full[4, 2:9])
    np.testing.assert_allclose(full, data, atol=1e-3)


def test_verify_hash_only_applies_to_full_reads():
    # single-msg.tgm has hash slots but no per-frame HASH_PRESENT bit, so a
    # verifying full decode must fail with MissingHashError (fixture README).
    path = FIXTURES / "single-msg.tgm"
    ds = xr.open_dataset(path, engine="tensogram", verify_hash=True)
    np.testing.assert_array_equal(ds["object_0"][1:2].values, [1.0])  # range read
    with pytest.raises(tensogram.MissingHashError):
        xr.open_dataset(path, engine="tensogram", verify_hash=True)["object_0"].values
    ds = xr.open_dataset(path, engine="tensogram", verify_hash=False)
    np.testing.assert_array_equal(ds["object_0"].values, reference_values(path, 0, 0))
    np.testing.assert_array_equal(ds["object_0"].values, [0.0, 1.0, 2.0, 3.0])


# ---------------------------------------------------------------------------
# dask
# ---------------------------------------------------------------------------


def test_chunked_dask_uses_decode_range_and_equals_eager(tmp_path, calls):
    data = np.arange(20 * 8, dtype="f4").reshape(20, 8)
    path = write_tgm(tmp_path / "dask.tgm", [({"base": [{"name": "v"}]}, [(desc([20, 8]), data)])])
    eager = xr.open_dataset(path, engine="tensogram")["v"].values
    calls.clear()

    ds = xr.open_dataset(path, engine="tensogram", chunks={"dim_0": 5})
    var = ds["v"]
    assert var.chunks == ((5, 5, 5, 5), (8,))
    assert payload_calls(calls) == []
    computed = var.compute().values
    np.testing.assert_array_equal(computed, eager)
    decoded = payload_calls(calls)
    assert names(decoded) == ["file_decode_range"] * 4
    runs = sorted(tuple(tuple(x) for x in c[1][2]) for c in decoded)
    assert runs == [((0, 40),), ((40, 40),), ((80, 40),), ((120, 40),)]
    # a reduction over the chunked variable gives the eager numbers
    calls.clear()
    np.testing.assert_allclose(var.mean("dim_1").values, eager.mean(axis=1))
    assert set(names(payload_calls(calls))) == {"file_decode_range"}


def test_chunks_empty_dict_gives_one_chunk_per_object(tmp_path, calls):
    data = np.arange(12, dtype="f4").reshape(3, 4)
    path = write_tgm(tmp_path / "one.tgm", [({"base": [{"name": "v"}]}, [(desc([3, 4]), data)])])
    ds = xr.open_dataset(path, engine="tensogram", chunks={})
    assert ds["v"].chunks == ((3,), (4,))
    np.testing.assert_array_equal(ds["v"].values, data)
    assert names(payload_calls(calls)) == ["file_decode_object"]


# ---------------------------------------------------------------------------
# Pickling
# ---------------------------------------------------------------------------


def test_backend_array_pickles_without_file_handle(tmp_path):
    data = np.arange(30, dtype="f4").reshape(5, 6)
    path = write_tgm(tmp_path / "p.tgm", [({"base": [{"name": "v"}]}, [(desc([5, 6]), data)])])
    array = TensogramBackendArray(
        source=os.path.abspath(path), msg_index=0, obj_index=0, shape=(5, 6),
        dtype="float32", range_capable=True,
    )
    # read once so the per-process cache holds an open handle
    np.testing.assert_array_equal(array.read((slice(0, 1), slice(None))), data[0:1])
    blob = pickle.dumps(array)
    _files.clear_file_cache()
    clone = pickle.loads(blob)
    assert clone.shape == (5, 6) and clone.dtype == np.float32
    assert (clone.source, clone.msg_index, clone.obj_index) == (array.source, 0, 0)
    np.testing.assert_array_equal(np.asarray(clone), data)
    np.testing.assert_array_equal(clone.read((slice(1, 3), 2)), data[1:3, 2])


def test_dask_graph_pickles_and_computes_in_other_processes(tmp_path):
    import dask

    data = np.arange(40, dtype="f4").reshape(8, 5)
    path = write_tgm(tmp_path / "mp.tgm", [({"base": [{"name": "v"}]}, [(desc([8, 5]), data)])])
    ds = xr.open_dataset(path, engine="tensogram", chunks={"dim_0": 2})
    blob = pickle.dumps(ds["v"].data)
    np.testing.assert_array_equal(pickle.loads(blob).compute(), data)
    with dask.config.set(scheduler="processes", num_workers=2):
        np.testing.assert_array_equal(ds["v"].compute().values, data)


# ---------------------------------------------------------------------------
# open_datasets / merge_objects
# ---------------------------------------------------------------------------


def _cube_file(tmp_path):
    dates = [20240101, 20240102]
    steps = [0, 6, 12]
    values = {}
    messages = []
    for date in dates:
        for step in steps:
            t2m = np.random.default_rng(date + step).random((3, 4)).astype("f4")
            msl = t2m + 1000
            tp = np.full(5, date * 100 + step, dtype="f8")
            values[(date, step)] = (t2m, msl, tp)
            mars = {"date": date, "step": step, "class": "od"}
            messages.append(
                (
                    {
                        "base": [
                            {"name": "t2m", "units": "K", "mars": dict(mars)},
                            {"name": "msl", "units": "Pa", "mars": dict(mars)},
                            {"name": "tp", "mars": dict(mars)},
                        ],
                        "_extra_": {"centre": "ecmwf"},
                    },
                    [(desc([3, 4]), t2m), (desc([3, 4]), msl), (desc([5], "float64"), tp)],
                )
            )
    # store the messages out of order: stacking must not depend on file order
    order = [3, 0, 5, 1, 4, 2]
    path = write_tgm(tmp_path / "cube.tgm", [messages[i] for i in order])
    return path, dates, steps, values


def test_open_datasets_groups_and_stacks(tmp_path, calls):
    path, dates, steps, values = _cube_file(tmp_path)
    datasets = tensogram_xarray.open_datasets(path)
    assert payload_calls(calls) == []
    assert len(datasets) == 2  # (3,4) float32 and (5,) float64

    grid = datasets[0]
    assert set(grid.data_vars) == {"t2m", "msl"}
    assert grid["t2m"].dims == ("mars.date", "mars.step", "dim_0", "dim_1")
    assert grid["t2m"].shape == (2, 3, 3, 4)
    np.testing.assert_array_equal(grid["mars.date"].values, dates)
    np.testing.assert_array_equal(grid["mars.step"].values, steps)
    assert grid["t2m"].attrs == {"name": "t2m", "units": "K", "mars": {"class": "od"}}
    assert grid["msl"].attrs["units"] == "Pa"
    assert grid.attrs == {"centre": "ecmwf", "tensogram_wire_version": 3}

    cell = grid["t2m"].sel({"mars.date": 20240102, "mars.step": 6})
    np.testing.assert_array_equal(cell.values, values[(20240102, 6)][0])
    # only that one object was read
    assert len(payload_calls(calls)) == 1
    full = grid["msl"].values
    for i, d in enumerate(dates):
        for j, s in enumerate(steps):
            np.testing.assert_array_equal(full[i, j], values[(d, s)][1])

    tp = datasets[1]
    assert list(tp.data_vars) == ["tp"]
    assert tp["tp"].dims == ("mars.date", "mars.step", "dim_0")
    assert tp["tp"].dtype == np.float64
    np.testing.assert_array_equal(tp["tp"].values[:, :, 0], [[d * 100 + s for s in steps] for d in dates])


def test_merge_objects_returns_first_open_datasets_result(tmp_path):
    path, *_ = _cube_file(tmp_path)
    merged = xr.open_dataset(path, engine="tensogram", merge_objects=True)
    first = tensogram_xarray.open_datasets(path)[0]
    xr.testing.assert_identical(merged.load(), first.load())


def test_open_datasets_chunked_matches_eager(tmp_path):
    path, *_ = _cube_file(tmp_path)
    ds = tensogram_xarray.open_datasets(path)[0]
    eager = ds["t2m"].values
    chunked = ds["t2m"].chunk({"mars.date": 1, "mars.step": 1, "dim_0": 1})
    np.testing.assert_array_equal(chunked.compute().values, eager)
    assert pickle.loads(pickle.dumps(chunked.data)).compute().shape == eager.shape


def test_open_datasets_chunks_one_per_object(tmp_path, calls):
    path, dates, steps, values = _cube_file(tmp_path)
    grid = tensogram_xarray.open_datasets(path, chunks={})[0]
    assert grid["t2m"].chunks == ((1, 1), (1, 1, 1), (3,), (4,))
    assert grid["t2m"].encoding["preferred_chunks"] == {"mars.date": 1, "mars.step": 1}
    assert payload_calls(calls) == []
    # One chunk is one object: computing one cell decodes exactly that object.
    cell = grid["t2m"].sel({"mars.date": dates[1], "mars.step": steps[2]}).compute()
    np.testing.assert_array_equal(cell.values, values[(dates[1], steps[2])][0])
    assert names(payload_calls(calls)) == ["file_decode_object"]
    # Entries of the mapping override the per-object default.
    grid = tensogram_xarray.open_datasets(path, chunks={"mars.step": 3})[0]
    assert grid["t2m"].chunks == ((1, 1), (3,), (3,), (4,))
    # No chunks: lazy but not dask.
    assert tensogram_xarray.open_datasets(path)[0]["t2m"].chunks is None

    messages = [
        ({"base": [{"name": "v", "mars": {"date": d}}]}, [(desc([2]), np.full(2, k, "f4"))])
        for k, d in enumerate([1, 2, 2])
    ]
    (fallback,) = tensogram_xarray.open_datasets(write_tgm(tmp_path / "dupe.tgm", messages), chunks={})
    assert fallback["v"].dims == ("object", "dim_0")
    assert fallback["v"].chunks == ((1, 1, 1), (2,))
    np.testing.assert_array_equal(fallback["v"].values[:, 0], [0, 1, 2])


def test_open_datasets_lockstep_key_becomes_auxiliary_coordinate(tmp_path):
    messages = []
    for i, step in enumerate([0, 6, 12]):
        messages.append(
            ({"base": [{"name": "v", "step_label": f"+{step}h", "fc_step": step}]}, [(desc([2]), np.full(2, i, "f4"))])
        )
    path = write_tgm(tmp_path / "lock.tgm", messages)
    (ds,) = tensogram_xarray.open_datasets(path)
    # Both keys split the messages the same way.  The first key in metadata
    # order (canonical CBOR: shorter key first) is the dimension, the other
    # a non-index coordinate along it.
    assert ds["v"].dims == ("fc_step", "dim_0")
    np.testing.assert_array_equal(ds["fc_step"].values, [0, 6, 12])
    assert ds["step_label"].dims == ("fc_step",)
    assert list(ds["step_label"].values) == ["+0h", "+6h", "+12h"]
    np.testing.assert_array_equal(ds["v"].values[:, 0], [0, 1, 2])


def test_open_datasets_incomplete_grid_falls_back_to_object_dim(tmp_path):
    messages = [
        ({"base": [{"name": "v", "mars": {"date": d}}]}, [(desc([2]), np.full(2, k, "f4"))])
        for k, d in enumerate([1, 2, 2])
    ]
    path = write_tgm(tmp_path / "dupe.tgm", messages)
    (ds,) = tensogram_xarray.open_datasets(path)
    assert ds["v"].dims == ("object", "dim_0")
    np.testing.assert_array_equal(ds["mars.date"].values, [1, 2, 2])
    np.testing.assert_array_equal(ds["v"].values[:, 0], [0, 1, 2])


def test_open_datasets_on_fixtures():
    path = FIXTURES / "ten-msg.tgm"
    (ds,) = tensogram_xarray.open_datasets(path)
    assert ds["object_0"].dims == ("fixture.msg_index", "dim_0")
    np.testing.assert_array_equal(ds["fixture.msg_index"].values, np.arange(10))
    f = tensogram.TensogramFile.open(str(path))
    expected = np.stack([np.asarray(f.file_decode_object(i, 0)["data"]) for i in range(10)])
    np.testing.assert_array_equal(ds["object_0"].values, expected)

    path = FIXTURES / "multi_message.tgm"
    (ds,) = tensogram_xarray.open_datasets(path)
    # identical metadata in both messages: no key to stack on → object dim
    assert ds["object_0"].dims == ("object", "dim_0")
    np.testing.assert_array_equal(ds["object_0"].values, [[1.0, 2.0], [3.0, 4.0]])


def test_open_datasets_dim_names_and_coordinates(tmp_path):
    messages = [
        (
            {"base": [{"name": "latitude"}, {"name": "v", "mars": {"step": s}}]},
            [(desc([3], "float64"), np.array([1.0, 2.0, 3.0])), (desc([3, 2]), np.full((3, 2), s, "f4"))],
        )
        for s in (0, 6)
    ]
    path = write_tgm(tmp_path / "dc.tgm", messages)
    (ds,) = tensogram_xarray.open_datasets(path)
    assert ds["v"].dims == ("mars.step", "latitude", "dim_1")
    np.testing.assert_array_equal(ds["latitude"].values, [1.0, 2.0, 3.0])
    (ds,) = tensogram_xarray.open_datasets(path, dim_names=["a", "b"])
    assert ds["v"].dims == ("mars.step", "a", "b")
    with pytest.raises(ValueError, match="dim_names has 3 entries"):
        tensogram_xarray.open_datasets(path, dim_names=["a", "b", "c"])
