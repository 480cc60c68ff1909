"""GRIB and NetCDF converters through the module (spec 04 B.5, spec 05 §6)."""

import numpy as np
import pytest

import tensogram


def grib(fixtures_dir, name):
    return fixtures_dir / "grib" / f"{name}.grib2"


def netcdf(fixtures_dir, name):
    return fixtures_dir / "netcdf" / f"{name}.nc"


def test_converters_are_built():
    assert tensogram.__has_grib__ is True and tensogram.__has_netcdf__ is True


def test_convert_grib_2t(fixtures_dir):
    (msg,) = tensogram.convert_grib(grib(fixtures_dir, "2t"))
    meta, objects = tensogram.decode(msg)
    desc, values = objects[0]
    assert desc.dtype == "float64" and desc.shape == [721, 1440]
    mars = meta["mars"]
    assert mars["param"] == 167 and mars["levtype"] == "sfc" and mars["class"] == "od"
    assert mars["grid"] == "regular_ll" and mars["area"] == [90.0, -180.0, -90.0, 179.75]
    assert "grib_repro" in meta.base[0] and "grib" not in meta.base[0]
    assert 212.0 < values.min() < values.max() < 312.0


def test_grouping_and_buffer(fixtures_dir):
    names = ["2t", "lsm", "q_150", "t_600"]
    blob = b"".join(grib(fixtures_dir, n).read_bytes() for n in names)
    merged = tensogram.convert_grib_buffer(blob)
    assert len(merged) == 1 and tensogram.decode_metadata(merged[0]).num_objects == 4
    split = tensogram.convert_grib_buffer(blob, grouping="one_to_one", preserve_all_keys=True)
    assert len(split) == 4
    assert [tensogram.decode_metadata(m)["mars"]["param"] for m in split] == [167, 172, 133, 130]
    assert "parameter" in tensogram.decode_metadata(split[0])["grib"]
    with pytest.raises(ValueError, match="grouping"):
        tensogram.convert_grib_buffer(blob, grouping="bogus")


def test_grib_bitmap_becomes_nan(fixtures_dir):
    (msg,) = tensogram.convert_grib(grib(fixtures_dir, "lsm_bitmap"))
    values = tensogram.decode(msg).objects[0][1]
    assert int(np.isnan(values).sum()) == 679_322
    assert not (values == 9999).any()


def test_grib_round_trip(fixtures_dir):
    (msg,) = tensogram.convert_grib(grib(fixtures_dir, "q_150"), encoding="simple_packing", bits=24,
                                    compression="szip")  # fmt: skip
    original = tensogram.decode(tensogram.convert_grib(grib(fixtures_dir, "q_150"))[0]).objects[0][1]
    back = tensogram.to_grib([msg])
    assert back[:4] == b"GRIB" and back[-4:] == b"7777"
    (again,) = tensogram.convert_grib_buffer(back)
    values = tensogram.decode(again).objects[0][1]
    span = float(original.max() - original.min())
    assert np.max(np.abs(values - original)) <= span / 2**11  # GRIB's own 12-bit packing step


def test_grib_errors(fixtures_dir, tmp_path):
    with pytest.raises(FileNotFoundError):
        tensogram.convert_grib(tmp_path / "missing.grib2")
    with pytest.raises(ValueError, match="no GRIB messages found in input"):
        tensogram.convert_grib_buffer(b"not a grib file at all")
    truncated = grib(fixtures_dir, "2t").read_bytes()[:1000]
    with pytest.raises((ValueError, RuntimeError)):
        tensogram.convert_grib_buffer(truncated)
    with pytest.raises(ValueError, match="grib_repro"):
        tensogram.to_grib(tensogram.encode({}, [({"type": "ntensor", "shape": [2], "dtype": "float64"},
                                                 np.zeros(2))]))  # fmt: skip


def test_convert_netcdf_cf_temperature(fixtures_dir):
    (msg,) = tensogram.convert_netcdf(netcdf(fixtures_dir, "cf_temperature"), cf=True)
    meta, objects = tensogram.decode(msg)
    names = [b["name"] for b in meta.base]
    assert names == ["lat", "lon", "time", "temperature"]
    temperature = objects[3]
    assert temperature[0].dtype == "float64" and temperature[0].shape == [3, 5, 4]
    nc = meta.base[3]["netcdf"]
    assert {"standard_name", "units", "_dims", "_file"} <= set(nc) and "scale_factor" not in nc
    assert meta.base[0]["cf"]["axis"] == "Y"


def test_netcdf_split_modes_and_errors(fixtures_dir, tmp_path):
    records = tensogram.convert_netcdf(netcdf(fixtures_dir, "unlimited_time"), split_by="record")
    assert len(records) == 5
    assert [tensogram.decode_metadata(m).base[0]["netcdf"]["record_index"] for m in records] == list(range(5))
    with pytest.raises(ValueError, match="requires an unlimited dimension"):
        tensogram.convert_netcdf(netcdf(fixtures_dir, "simple_2d"), split_by="record")
    with pytest.raises(ValueError, match="no variables found in input"):
        tensogram.convert_netcdf(netcdf(fixtures_dir, "empty_file"))
    with pytest.raises(ValueError, match="split_by"):
        tensogram.convert_netcdf(netcdf(fixtures_dir, "simple_2d"), split_by="bogus")
    with pytest.raises(FileNotFoundError):
        tensogram.convert_netcdf(tmp_path / "missing.nc")
    broken = tmp_path / "broken.nc"
    broken.write_bytes(netcdf(fixtures_dir, "cf_temperature").read_bytes()[:200])
    with pytest.raises((RuntimeError, ValueError)):
        tensogram.convert_netcdf(broken)


def test_netcdf_groups(fixtures_dir, capfd):
    nested = tensogram.convert_netcdf(netcdf(fixtures_dir, "nc4_groups"))
    names = [b["name"] for b in tensogram.decode_metadata(nested[0]).base]
    assert "root_var" in names and any("." in n for n in names)
    (root,) = tensogram.convert_netcdf(netcdf(fixtures_dir, "nc4_groups"), nested_groups=False)
    assert [b["name"] for b in tensogram.decode_metadata(root).base] == ["root_var"]
    assert "sub-groups found" in capfd.readouterr().err


def test_netcdf_round_trip(fixtures_dir, tmp_path):
    messages = tensogram.convert_netcdf(netcdf(fixtures_dir, "multi_var"))
    out = tmp_path / "back.nc"
    tensogram.to_netcdf(messages, out)
    (again,) = tensogram.convert_netcdf(out)
    first = tensogram.decode(messages[0])
    second = tensogram.decode(again)
    assert [b["name"] for b in first.metadata.base] == [b["name"] for b in second.metadata.base]
    for (d1, a1), (d2, a2) in zip(first.objects, second.objects):
        assert d1.dtype == d2.dtype and d1.shape == d2.shape
        np.testing.assert_array_equal(a1, a2)
