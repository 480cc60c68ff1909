"""Metatensor and safetensors files as PyTorch tensors, with the API of ``safetensors.torch``::

    from tensogram.metatensor.torch import load_file, save_file

    save_file({"w": torch.ones(2, 3)}, "model.safetensors", metadata={"step": "10"})
    w = load_file("model.safetensors")["w"]          # shares memory with the file's map

``safe_open(path, framework="pt")`` returns the same tensors one at a time.

Tensors of a file are not copies: they are views of a private copy-on-write
map of the file. Reading touches the file's pages; writing a tensor in place
copies the pages it writes for this process only, and the file never changes
(PyTorch has no read-only tensors, so the map is made writable this way rather
than read-only, where an in-place operation would crash the process).

Flat tensors only: struct and blob tensors (records, strings, ragged lists)
have no PyTorch equivalent and raise TypeError; read them with
``framework="np"``. Dtypes PyTorch lacks (unsigned 16/32/64-bit integers
before PyTorch 2.3, the F8 types before 2.1) raise TypeError naming the dtype.
"""

from __future__ import annotations

import os as _os
from typing import Any, Dict, Mapping, Optional

import numpy as _np
import torch as _torch

from . import _sources

__all__ = ["load", "load_file", "save", "save_file", "to_torch"]

# safetensors dtype name -> torch attribute name.
_TORCH_NAMES = {
    "BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "U16": "uint16", "I32": "int32",
    "U32": "uint32", "I64": "int64", "U64": "uint64", "F16": "float16", "BF16": "bfloat16",
    "F32": "float32", "F64": "float64", "C64": "complex64", "F8_E4M3": "float8_e4m3fn",
    "F8_E5M2": "float8_e5m2", "F8_E8M0": "float8_e8m0fnu", "F8_E4M3FNUZ": "float8_e4m3fnuz",
    "F8_E5M2FNUZ": "float8_e5m2fnuz",
}
# Element types torch.from_numpy takes as they are; the others are viewed
# through the signed integer of their size and reinterpreted.
_FROM_NUMPY = {"BOOL", "U8", "I8", "I16", "I32", "I64", "F16", "F32", "F64", "C64"}
_SIGNED_OF_SIZE = {1: _np.int8, 2: _np.int16, 4: _np.int32, 8: _np.int64}


def _torch_dtype(name: str, dtype: str) -> Any:
    attr = _TORCH_NAMES.get(dtype)
    found = getattr(_torch, attr, None) if attr else None
    if not isinstance(found, _torch.dtype):
        raise TypeError(
            f"tensor {name!r} has dtype {dtype}, for which PyTorch {_torch.__version__} has no tensor type"
            + (f" (torch.{attr} is missing)" if attr else "")
            + "; read it with framework='np'"
        )
    return found


def to_torch(name: str, kind: str, dtype: str, value: Any) -> _torch.Tensor:
    """The tensor over a (writable) numpy view's memory: no copy."""
    if kind != "flat":
        raise TypeError(
            f"tensor {name!r} is a {dtype} tensor ({kind}), which has no PyTorch equivalent; "
            "read it with framework='np' (structured arrays for records, BlobSequence for strings and lists)"
        )
    target = _torch_dtype(name, dtype)
    if dtype in _FROM_NUMPY:
        return _torch.from_numpy(value)
    bits = value.view(_SIGNED_OF_SIZE[value.dtype.itemsize])
    return _torch.from_numpy(bits).view(target)


def _load(source: Any) -> Dict[str, _torch.Tensor]:
    try:
        return {name: source.tensor(name) for name in source.keys()}
    finally:
        source.close()


def load_file(filename: str | _os.PathLike[str], device: Any = "cpu") -> Dict[str, _torch.Tensor]:
    """Every tensor of a file (a path or an http(s)/metatensor URL), sharing memory with its map."""
    return _load(_sources.open_file(filename, "pt", device))


def load(data: bytes) -> Dict[str, _torch.Tensor]:
    """Every tensor of a file image (copied once; the tensors share that copy)."""
    return _load(_sources.ConvertedSource(_sources.open_bytes(data, "pt"), to_torch))


def _arrays(tensors: Mapping[str, _torch.Tensor]) -> list[tuple[str, _np.ndarray, str]]:
    reverse = {getattr(_torch, attr): st for st, attr in _TORCH_NAMES.items() if hasattr(_torch, attr)}
    out = []
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be str, got {type(name).__name__}")
        if not isinstance(t, _torch.Tensor):
            raise TypeError(f"tensor {name!r} is a {type(t).__name__}, not a torch.Tensor")
        dtype = reverse.get(t.dtype)
        if dtype is None:
            raise TypeError(f"tensor {name!r} has torch dtype {t.dtype}, which safetensors cannot hold")
        t = t.detach().cpu().contiguous()
        if dtype in _FROM_NUMPY:
            array = t.numpy()
        else:  # BF16, F8, unsigned: through the signed integer of the element size
            signed = {1: _torch.int8, 2: _torch.int16, 4: _torch.int32, 8: _torch.int64}[t.element_size()]
            array = t.view(signed).numpy()
        out.append((name, array, dtype))
    return out


def save(tensors: Mapping[str, _torch.Tensor], metadata: Optional[Mapping[str, str]] = None) -> bytes:
    """The metatensor file image of ``{name: tensor}`` and user metadata."""
    from .. import _metatensor

    return _metatensor.serialize(_arrays(tensors), dict(metadata or {}))


def save_file(
    tensors: Mapping[str, _torch.Tensor],
    filename: str | _os.PathLike[str],
    metadata: Optional[Mapping[str, str]] = None,
) -> None:
    """``save`` written atomically to ``filename``."""
    from .. import _metatensor

    _metatensor.write_file(_arrays(tensors), _os.fspath(filename), dict(metadata or {}))
