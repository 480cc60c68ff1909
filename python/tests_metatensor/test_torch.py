"""PyTorch tensors from metatensor files: `safe_open(framework="pt")` and
`tensogram.metatensor.torch` (the `safetensors.torch` API). Tensors are views
of a private copy-on-write map of the file: their addresses are the map's
(read from /proc/self/maps and the header parsed here independently), writes
stay in the process and the file never changes."""

from __future__ import annotations

import json
import os
import re
import struct
import warnings

import numpy as np
import pytest
from conftest import read_safetensors, write_safetensors
from test_records_blobs import SCHEMA, values

from tensogram import _metatensor
from tensogram import metatensor as mt

torch = pytest.importorskip("torch")
mtt = pytest.importorskip("tensogram.metatensor.torch")


def header_of(path) -> tuple[int, dict]:
    """(data offset 8 + N, header JSON), parsed here with struct and json only."""
    raw = open(path, "rb").read()
    (n,) = struct.unpack_from("<Q", raw, 0)
    return 8 + n, json.loads(raw[8:8 + n])


def mapping_starts(path) -> list[int]:
    """Start addresses of this process's mappings of `path` that begin at file offset 0."""
    real = os.path.realpath(path)
    starts = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and parts[5].strip() == real and int(parts[2], 16) == 0:
                starts.append(int(parts[0].split("-")[0], 16))
    return starts


@pytest.fixture
def weights(tmp_path, rng):
    arrays = {"embed": rng.standard_normal((64, 8)).astype(np.float32),
              "bias": np.arange(8, dtype=np.int64), "mask": np.array([True, False, True])}
    path = tmp_path / "w.safetensors"
    mt.save_file(arrays, path, metadata={"step": "3"})
    return path, arrays


def test_tensors_live_in_the_files_map(weights):
    path, arrays = weights
    data_offset, header = header_of(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "non-writable" warning from torch
        with mt.safe_open(path, framework="pt") as f:
            tensors = {name: f.get_tensor(name) for name in f.keys()}
            starts = mapping_starts(path)
            assert len(starts) == 1, starts
            for name, t in tensors.items():
                assert isinstance(t, torch.Tensor)
                assert t.data_ptr() == starts[0] + data_offset + header[name]["data_offsets"][0]
                assert np.array_equal(t.numpy(), arrays[name])
            assert f.get_tensor("embed").data_ptr() == tensors["embed"].data_ptr()
            assert f.metadata() == {"step": "3"}


def test_load_file_tensors_share_one_map(weights):
    path, arrays = weights
    data_offset, header = header_of(path)
    loaded = mtt.load_file(path)
    [start] = mapping_starts(path)  # still mapped: the tensors hold it
    for name, t in loaded.items():
        assert t.data_ptr() == start + data_offset + header[name]["data_offsets"][0]
        assert np.array_equal(t.numpy(), arrays[name])
    del loaded, t
    assert mapping_starts(path) == []  # the last tensor unmapped it


def test_writes_are_copy_on_write(weights):
    path, arrays = weights
    before = path.read_bytes()
    with mt.safe_open(path, framework="pt") as f:
        embed = f.get_tensor("embed")
        embed.add_(1.0)  # in place: copies the touched pages for this process
        assert torch.equal(f.get_tensor("embed"), embed)  # same map: the same memory
    assert path.read_bytes() == before  # the file never changes
    with mt.safe_open(path, framework="pt") as f:
        assert np.array_equal(f.get_tensor("embed").numpy(), arrays["embed"])
    with mt.safe_open(path, framework="np") as f:
        assert not f.get_tensor("embed").flags.writeable  # numpy views stay read-only


def test_tensors_outlive_close(weights):
    path, arrays = weights
    with mt.safe_open(path, framework="pt") as f:
        embed = f.get_tensor("embed")
        part = f.get_slice("embed")[2:4, 1:]
    assert float(embed.sum()) == pytest.approx(float(arrays["embed"].sum()), rel=1e-5)
    assert isinstance(part, torch.Tensor) and np.array_equal(part.numpy(), arrays["embed"][2:4, 1:])
    with pytest.raises(IndexError, match="MT_BAD_RANGE"), mt.safe_open(path, framework="pt") as f:
        f.get_slice("bias")[8]


NUMPY_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.float16, np.float32,
                np.float64, np.complex64]


@pytest.mark.parametrize("dtype", NUMPY_DTYPES, ids=lambda d: np.dtype(d).name)
def test_dtypes_as_numpy_has_them(tmp_path, rng, dtype):
    a = (rng.standard_normal((3, 5)) * 50).astype(dtype)
    path = tmp_path / "d.safetensors"
    path.write_bytes(write_safetensors({"pad": np.zeros(1, np.uint8), "a": a}))  # unaligned plain file
    with mt.safe_open(path, framework="pt") as f:
        t = f.get_tensor("a")
    assert t.dtype == torch.from_numpy(a).dtype and t.shape == a.shape
    assert np.array_equal(t.numpy(), a)


def test_bfloat16_round_trip(tmp_path):
    t = torch.tensor([[1.5, -2.0], [3.25, 1e30]], dtype=torch.bfloat16)
    path = tmp_path / "b.safetensors"
    mtt.save_file({"t": t}, path)
    assert header_of(path)[1]["t"]["dtype"] == "BF16"
    back = mtt.load_file(path)["t"]
    assert back.dtype == torch.bfloat16 and torch.equal(back, t)
    with mt.safe_open(path, framework="np") as f:  # numpy without ml_dtypes: the bits
        bits = f.get_tensor("t")
    assert np.array_equal(bits.view(np.int16), t.view(torch.int16).numpy())


@pytest.mark.parametrize("dtype,name", [(np.uint16, "U16"), (np.uint32, "U32"), (np.uint64, "U64")])
def test_unsigned_dtypes_torch_lacks(tmp_path, dtype, name):
    a = np.array([0, 1, np.iinfo(dtype).max], dtype)
    path = tmp_path / "u.safetensors"
    mt.save_file({"u": a}, path)
    with mt.safe_open(path, framework="pt") as f:
        if isinstance(getattr(torch, np.dtype(dtype).name, None), torch.dtype):  # PyTorch 2.3 on
            signed = {2: torch.int16, 4: torch.int32, 8: torch.int64}[a.itemsize]
            assert np.array_equal(f.get_tensor("u").view(signed).numpy().view(dtype), a)
        else:
            with pytest.raises(TypeError, match=f"dtype {name}.*framework='np'"):
                f.get_tensor("u")


def test_struct_and_blob_tensors_point_to_numpy(tmp_path, rng):
    path = tmp_path / "rich.safetensors"
    path.write_bytes(_metatensor.serialize_json(json.dumps(SCHEMA), json.dumps(values(rng)), {}))
    with mt.safe_open(path, framework="pt") as f:
        assert isinstance(f.get_tensor("dense"), torch.Tensor)
        for name, kind in (("particles", "struct"), ("names", "string"), ("rows", "list")):
            with pytest.raises(TypeError, match=f"{kind} tensor.*framework='np'"):
                f.get_tensor(name)
        with pytest.raises(TypeError, match="framework='np'"):
            f.get_blob_field("tagged", "label")
    with pytest.raises(TypeError, match="has no PyTorch equivalent"):
        mtt.load_file(path)


def test_save_and_load_bytes(rng):
    tensors = {"w": torch.from_numpy(rng.standard_normal((4, 3)).astype(np.float32)),
               "i": torch.arange(5, dtype=torch.int32), "h": torch.ones(2, dtype=torch.float16),
               "s": torch.arange(12, dtype=torch.float64).reshape(3, 4).t()}  # not contiguous
    image = mtt.save(tensors, metadata={"k": "v"})
    back = mtt.load(image)
    assert sorted(back) == sorted(tensors)
    for name, t in tensors.items():
        assert back[name].dtype == t.dtype and torch.equal(back[name], t)
    back["w"].mul_(2)  # the tensors share one writable copy of the image
    plain, metadata = read_safetensors(image)  # an independent reader agrees
    assert metadata["k"] == "v"
    for name, t in tensors.items():
        assert np.array_equal(plain[name], t.numpy())


def test_save_rejects_what_safetensors_cannot_hold(tmp_path):
    with pytest.raises(TypeError, match="not a torch.Tensor"):
        mtt.save({"x": np.zeros(2)})
    with pytest.raises(TypeError, match="names must be str"):
        mtt.save({1: torch.zeros(2)})
    if hasattr(torch, "complex128"):
        with pytest.raises(TypeError, match="complex128"):
            mtt.save({"c": torch.zeros(2, dtype=torch.complex128)})


def test_devices_other_than_cpu(weights):
    path, _ = weights
    for device in ("cuda", "cuda:1", "mps", 0):
        with pytest.raises(mt.SafetensorError, match=f"device {device} is not supported"):
            mt.safe_open(path, framework="pt", device=device)
        with pytest.raises(mt.SafetensorError, match=f"device {device} is not supported"):
            mtt.load_file(path, device=device)
    with pytest.raises(mt.SafetensorError, match="device gpu is invalid"):
        mt.safe_open(path, framework="pt", device="gpu")


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        mtt.load_file(tmp_path / "absent.safetensors")


def test_the_documentation_example():
    from test_docs import DOC

    section = DOC.read_text().split("\n## PyTorch\n")[1].split("\n## ")[0]
    [code] = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    exec(code, {})


def test_stubs_match_the_module():
    import ast
    from pathlib import Path

    from test_stubs import real_params, stub_params

    stub = Path(mtt.__file__).with_suffix(".pyi")
    if not stub.exists():  # the build tree copies the stubs too; the source tree has them
        stub = Path(__file__).resolve().parents[1] / "tensogram" / "metatensor" / "torch.pyi"
    functions = {n.name: n for n in ast.parse(stub.read_text()).body if isinstance(n, ast.FunctionDef)}
    assert sorted(functions) == sorted(mtt.__all__)
    for name, node in functions.items():
        assert stub_params(node) == real_params(getattr(mtt, name)), name
