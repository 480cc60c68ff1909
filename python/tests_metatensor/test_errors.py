"""Bad input through tensogram.metatensor: every failure is a Python
exception (never a crash), and failures of the file carry the format's
error name in the message and in `code`."""

from __future__ import annotations

import importlib.util
import struct

import numpy as np
import pytest
from conftest import write_safetensors

from tensogram import metatensor as mt


def good_image() -> bytes:
    return mt.save({"a": np.arange(12, dtype=np.float32).reshape(3, 4), "b": np.arange(5, dtype=np.int64)},
                   metadata={"k": "v"})


def assert_coded(excinfo, prefix: str) -> None:
    err = excinfo.value
    assert isinstance(err.code, str) and err.code.startswith(prefix), err.code
    assert err.code in str(err)


@pytest.mark.parametrize("cut", [0, 3, 8, 20, -1, -17])
def test_truncated_files(tmp_path, cut):
    image = good_image()
    path = tmp_path / "cut.safetensors"
    path.write_bytes(image[:cut])
    with pytest.raises(mt.MetatensorError) as excinfo:
        mt.safe_open(path, framework="np")
    assert_coded(excinfo, "ST_")
    assert str(path) in str(excinfo.value)  # says which file
    with pytest.raises(mt.MetatensorError) as excinfo:
        mt.load(image[:cut])
    assert_coded(excinfo, "ST_")


@pytest.mark.parametrize("length,code", [
    (2**64 - 1, "ST_HEADER_TOO_LARGE"),
    (100_000_001, "ST_HEADER_TOO_LARGE"),
    (10_000, "ST_HEADER_LENGTH"),  # longer than the file
])
def test_hostile_header_length(length, code):
    image = struct.pack("<Q", length) + good_image()[8:]
    with pytest.raises(mt.MetatensorError) as excinfo:
        mt.load(image)
    assert excinfo.value.code == code
    assert code in str(excinfo.value)


def test_hostile_offsets_in_a_plain_file():
    image = bytearray(write_safetensors({"x": np.arange(4, dtype=np.int32)}))
    (n,) = struct.unpack_from("<Q", image, 0)
    header = bytes(image[8:8 + n]).replace(b"[0,16]", b"[0,99]")
    assert len(header) == n
    image[8:8 + n] = header
    with pytest.raises(mt.MetatensorError) as excinfo:
        mt.load(bytes(image))
    assert_coded(excinfo, "ST_")


def test_corrupted_headers_never_crash(rng):
    """Random byte flips in the header: each image either opens and reads or
    raises MetatensorError with a format error name."""
    image = good_image()
    (n,) = struct.unpack_from("<Q", image, 0)
    opened = 0
    for _ in range(300):
        bad = bytearray(image)
        for pos in rng.integers(0, 8 + n, size=int(rng.integers(1, 4))):
            bad[pos] = int(rng.integers(0, 256))
        try:
            tensors = mt.load(bytes(bad))
        except mt.MetatensorError as e:
            assert e.code is not None and e.code in str(e)
        else:
            opened += 1
            for value in tensors.values():
                np.asarray(value).sum()
    assert opened < 300  # the flips did break files


def test_unknown_tensor_name_is_a_key_error(tmp_path):
    path = tmp_path / "f.safetensors"
    path.write_bytes(good_image())
    with mt.safe_open(path, framework="np") as f:
        for call in (f.get_tensor, f.get_slice):
            with pytest.raises(KeyError) as excinfo:
                call("missing")
            assert isinstance(excinfo.value, mt.TensorNotFoundError)
            assert isinstance(excinfo.value, mt.MetatensorError)
            assert excinfo.value.code == "MT_NOT_FOUND"
            assert "MT_NOT_FOUND" in str(excinfo.value) and "missing" in str(excinfo.value)
    plain = tmp_path / "plain.safetensors"
    plain.write_bytes(write_safetensors({"x": np.zeros(2)}))
    with mt.safe_open(plain, framework="np") as f, pytest.raises(mt.TensorNotFoundError):
        f.get_tensor("y")


def test_out_of_range_index(tmp_path):
    path = tmp_path / "f.safetensors"
    path.write_bytes(good_image())
    with mt.safe_open(path, framework="np") as f:
        with pytest.raises(IndexError, match="MT_BAD_RANGE"):
            f.get_slice("a")[3]
        with pytest.raises(IndexError, match="MT_BAD_RANGE"):
            f.get_slice("a")[0, 0, 0]


def test_wrong_framework_and_device(tmp_path):
    path = tmp_path / "f.safetensors"
    path.write_bytes(good_image())
    # The exception safetensors raises for these: SafetensorError.
    with pytest.raises(mt.SafetensorError, match="framework tf is not supported"):
        mt.safe_open(path, framework="tf")
    with pytest.raises(mt.SafetensorError, match="^framework nope is invalid$"):
        mt.safe_open(path, framework="nope")
    with pytest.raises(mt.SafetensorError, match="device cuda is not supported"):
        mt.safe_open(path, framework="np", device="cuda")
    with pytest.raises(mt.SafetensorError, match="^device gpu is invalid$"):
        mt.safe_open(path, framework="np", device="gpu")


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="PyTorch is installed")
def test_torch_framework_without_torch(tmp_path):
    path = tmp_path / "f.safetensors"
    path.write_bytes(good_image())
    with pytest.raises(ImportError, match="needs PyTorch"):
        mt.safe_open(path, framework="pt")


def test_use_after_close(tmp_path):
    path = tmp_path / "f.safetensors"
    path.write_bytes(good_image())
    with mt.safe_open(path, framework="np") as f:
        sl = f.get_slice("a")
    for call in (f.keys, f.metadata, lambda: f.get_tensor("a"), lambda: f.get_slice("a"), lambda: sl[0]):
        with pytest.raises(mt.MetatensorError, match="closed"):
            call()


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        mt.safe_open(tmp_path / "nope.safetensors", framework="np")
    with pytest.raises(FileNotFoundError):
        mt.load_file(tmp_path / "nope.safetensors")
    with pytest.raises(OSError):
        mt.safe_open(tmp_path, framework="np")  # a directory


def test_bad_metadata_on_save():
    with pytest.raises(mt.MetatensorError) as excinfo:
        mt.save({"a": np.zeros(1)}, metadata={"metatensor.schema": "{}"})
    assert excinfo.value.code == "MT_UNKNOWN_KEY"
    with pytest.raises(TypeError):
        mt.save({"a": np.zeros(1)}, metadata={"k": 1})  # type: ignore[dict-item]


def test_bad_names_on_save():
    for name in ("__metadata__", "x#heap", "__pad__0"):
        with pytest.raises((mt.MetatensorError, ValueError)) as excinfo:
            mt.save({name: np.zeros(1)})
        assert name in str(excinfo.value) or "MT_" in str(excinfo.value)
