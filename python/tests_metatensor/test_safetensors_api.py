"""The safetensors surface of tensogram.metatensor (safe_open, load_file,
save_file, load, save) against the behaviour documented for
safetensors.numpy, and against an independent safetensors writer and reader
(conftest.py) in both directions."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from conftest import ST_TO_NUMPY, read_safetensors, write_safetensors

from tensogram import metatensor as mt


def sample(rng: np.random.Generator) -> dict:
    """One tensor of every numpy dtype the format shares with numpy, odd shapes included."""
    out = {}
    for st, np_name in ST_TO_NUMPY.items():
        dt = np.dtype(np_name)
        shape = tuple(int(d) for d in rng.integers(1, 5, size=int(rng.integers(0, 4))))
        if dt.kind == "b":
            out[st.lower()] = rng.integers(0, 2, size=shape).astype(bool)
        elif dt.kind in "ui":
            info = np.iinfo(dt)
            out[st.lower()] = rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
        elif dt.kind == "c":
            out[st.lower()] = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
        else:
            out[st.lower()] = rng.standard_normal(shape).astype(dt)
    out["empty"] = np.zeros((3, 0), np.float32)
    return out


def address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def assert_same(got: dict, want: dict) -> None:
    assert sorted(got) == sorted(want)
    for name, w in want.items():
        g = got[name]
        assert g.dtype == w.dtype.newbyteorder("<") or g.dtype == w.dtype, name
        assert g.shape == w.shape, name
        np.testing.assert_array_equal(g, w, err_msg=name)


def test_save_load_round_trip_every_dtype(rng):
    tensors = sample(rng)
    image = mt.save(tensors, metadata={"step": "10", "note": "ü"})
    assert isinstance(image, bytes)
    assert_same(mt.load(image), tensors)


def test_save_file_load_file_and_safe_open(tmp_path, rng):
    tensors = sample(rng)
    path = tmp_path / "model.safetensors"
    mt.save_file(tensors, path, metadata={"framework": "np"})
    assert_same(mt.load_file(path), tensors)
    with mt.safe_open(str(path), framework="np") as f:
        assert f.keys() == sorted(tensors)
        assert f.metadata() == {"framework": "np"}
        for name in f.keys():
            np.testing.assert_array_equal(f.get_tensor(name), tensors[name])
    # The same bytes whichever way the file was written.
    assert path.read_bytes() == mt.save(tensors, metadata={"framework": "np"})


def test_files_we_write_are_plain_safetensors(rng):
    tensors = sample(rng)
    image = mt.save(tensors, metadata={"k": "v"})
    got, metadata = read_safetensors(image)
    # Padding tensors (zeros) keep the data aligned; safetensors readers list them.
    pads = [k for k in got if k.startswith("__pad__")]
    assert all(not got.pop(k).any() for k in pads)
    assert_same(got, tensors)
    # The user's key, plus the format's own (metatensor.*) keys.
    assert metadata["k"] == "v"
    assert metadata["metatensor.version"] == "1"
    assert {k for k in metadata if not k.startswith("metatensor.")} == {"k"}


@pytest.mark.parametrize("lead", [0, 1, 3])
def test_we_read_files_from_another_writer(tmp_path, rng, lead):
    tensors = {k: v for k, v in sample(rng).items() if k != "empty"}
    if lead:  # every later tensor at an odd address
        tensors = {"lead": np.arange(lead, dtype=np.uint8), **tensors}
    image = write_safetensors(tensors, metadata={"who": "independent"})
    assert_same(mt.load(image), tensors)
    path = tmp_path / "theirs.safetensors"
    path.write_bytes(image)
    with mt.safe_open(path, framework="numpy") as f:
        assert f.keys() == sorted(tensors)
        # A plain file shows its whole __metadata__ and has no schema.
        assert f.metadata() == {"who": "independent"}
        assert f.schema() is None
        assert_same({k: f.get_tensor(k) for k in f.keys()}, tensors)


def test_metadata_is_none_when_the_header_has_none(tmp_path):
    path = tmp_path / "bare.safetensors"
    path.write_bytes(write_safetensors({"x": np.arange(3, dtype=np.int32)}))
    with mt.safe_open(path, framework="np") as f:
        assert f.metadata() is None
    # A metatensor file always has a header map: the user's part may be empty.
    with mt.safe_open(_saved(tmp_path, {"x": np.arange(3)}), framework="np") as f:
        assert f.metadata() == {}
        assert json.loads(f.schema())["properties"].keys() == {"x"}


def _saved(tmp_path, tensors, metadata=None):
    path = tmp_path / "ours.safetensors"
    mt.save_file(tensors, path, metadata=metadata)
    return path


def test_save_takes_any_layout_and_byte_order(rng):
    base = rng.standard_normal((4, 6))
    tensors = {
        "transposed": base.T,  # not C-contiguous
        "strided": base[::2, ::3],
        "big_endian": base.astype(">f4"),
        "scalar": np.float64(2.5),
        "list": [[1, 2], [3, 4]],
    }
    got = mt.load(mt.save(tensors))
    for name, value in tensors.items():
        np.testing.assert_array_equal(got[name], np.asarray(value), err_msg=name)
    assert got["big_endian"].dtype == np.dtype("<f4")
    assert got["scalar"].shape == ()


def test_views_are_zero_copy_and_read_only(tmp_path, rng):
    tensors = {"a": rng.standard_normal((5, 7)), "b": rng.integers(0, 100, size=(9,), dtype=np.int64)}
    path = _saved(tmp_path, tensors)
    image = path.read_bytes()
    (n,) = struct.unpack_from("<Q", image, 0)
    offsets = {k: v["data_offsets"][0] for k, v in json.loads(image[8:8 + n]).items() if k != "__metadata__"}
    with mt.safe_open(path, framework="np") as f:
        a, b, a2 = f.get_tensor("a"), f.get_tensor("b"), f.get_tensor("a")
        # Pointer identity: both views of "a" are the same memory, and the
        # distance between tensors is the distance between their file offsets,
        # so the arrays are the mapped file itself, not copies of it.
        assert address(a) == address(a2)
        assert np.shares_memory(a, a2)
        assert address(b) - address(a) == offsets["b"] - offsets["a"]
        for view in (a, b):
            assert not view.flags.writeable
            assert not view.flags.owndata
            assert not isinstance(view.base, np.ndarray)  # owned by the file, not a numpy copy
            with pytest.raises(ValueError):
                view[(0,) * view.ndim] = 0
        # Writing copies.
        copy = np.array(a)
        copy[0, 0] = 42.0
        assert a[0, 0] == tensors["a"][0, 0]


def test_views_outlive_the_file(tmp_path, rng):
    tensors = {"a": rng.standard_normal((64, 64))}
    path = _saved(tmp_path, tensors)
    with mt.safe_open(path, framework="np") as f:
        a = f.get_tensor("a")
    loaded = mt.load_file(path)
    path.unlink()  # the mapping stays valid without the directory entry
    np.testing.assert_array_equal(a, tensors["a"])
    np.testing.assert_array_equal(loaded["a"], tensors["a"])


def test_load_from_bytes_views_its_own_copy(rng):
    tensors = {"a": rng.standard_normal((3, 3)), "b": np.arange(10, dtype=np.uint16)}
    image = bytearray(mt.save(tensors))
    got = mt.load(bytes(image))
    image[:] = bytes(len(image))  # the caller's buffer may change afterwards
    assert_same(got, tensors)
    assert not got["a"].flags.writeable


def test_get_slice(tmp_path, rng):
    full = rng.standard_normal((6, 5, 4)).astype(np.float32)
    path = _saved(tmp_path, {"t": full, "s": np.float64(1.5)})
    with mt.safe_open(path, framework="np") as f:
        sl = f.get_slice("t")
        assert sl.get_shape() == [6, 5, 4]
        assert sl.get_dtype() == "F32"
        assert len(sl) == 6
        view = f.get_tensor("t")
        for index in [np.s_[1:3], np.s_[:, 2], np.s_[-1, ::2, 1:], np.s_[..., 0], np.s_[4], np.s_[2:2],
                      np.s_[::-1, 1]]:
            part = sl[index]
            np.testing.assert_array_equal(part, full[index], err_msg=str(index))
            if part.size:
                # A view into the mapped tensor: only the selected elements' pages are read.
                assert np.shares_memory(part, view), index
                assert not part.flags.writeable
        # Out-of-range slices clamp as numpy's do.
        np.testing.assert_array_equal(sl[4:100], full[4:100])
        scalar = f.get_slice("s")
        assert scalar.get_shape() == []
        assert scalar.get_dtype() == "F64"
        assert scalar[()] == 1.5


def test_safe_open_without_with_and_close(tmp_path):
    path = _saved(tmp_path, {"x": np.arange(4)})
    f = mt.safe_open(path, "np")
    assert f.keys() == ["x"]
    f.close()
    with pytest.raises(mt.MetatensorError, match="closed"):
        f.keys()


def test_save_refuses_what_the_format_cannot_hold():
    # Text arrays are String tensors (test_writer.py); arbitrary objects have no equivalent.
    assert list(mt.load(mt.save({"s": np.array(["a", "b"])}))["s"]) == ["a", "b"]
    with pytest.raises(TypeError, match="safetensors cannot hold"):
        mt.save({"o": np.array([object()])})
    with pytest.raises(TypeError):
        mt.save({1: np.zeros(2)})  # type: ignore[dict-item]
