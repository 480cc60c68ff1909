"""Metatensor files for Python: the safetensors API, plus records, strings and ragged tensors.

A program written for ``safetensors.numpy`` works by changing its import::

    from tensogram.metatensor import safe_open, save_file, load_file

    save_file({"w": np.ones((2, 3), np.float32)}, "model.safetensors", metadata={"step": "10"})
    with safe_open("model.safetensors", framework="np") as f:
        for name in f.keys():
            w = f.get_tensor(name)          # zero-copy, read-only view of the mapped file
        part = f.get_slice("w")[:, 1:]      # touches only the pages of those elements

Files written here are metatensor files (docs/metatensor-python.md), which
are valid safetensors files; plain safetensors files from any writer are
read too. Beyond safetensors, ``get_tensor`` returns struct tensors as numpy
structured arrays over the file and blob tensors (strings, ragged lists) as
``BlobSequence`` objects whose elements are read in O(1) when indexed.

Arrays are read-only views: copy (``np.array(a)``) to modify. They keep the
file mapped after ``safe_open`` is closed.
"""

from __future__ import annotations

import json as _json
import os as _os
from typing import Any, Dict, Mapping, Optional

import numpy as _np

from .. import _metatensor
from .._metatensor import BlobSequence, MetatensorError, TensorNotFoundError
from . import _schema, _tools, _writer
from ._schema import (SCHEMA_DIALECT, binary, check_schema, file_schema, fixed_array, ragged, scalar,
                      schema_from_dtype, string, struct, tensor, tuple_of)
from ._tools import SchemaChange, SchemaDiff, ValidationResult, diff, validate
from ._writer import infer_schema, save, save_file
from . import _sources

__all__ = [
    "BlobSequence",
    "MetatensorError",
    "SafetensorError",
    "TensorNotFoundError",
    "load",
    "load_file",
    "safe_open",
    # writing every kind of tensor, schemas, validation, schema evolution
    *_writer.__all__,
    *_schema.__all__,
    *_tools.__all__,
]

#: The name safetensors programs catch (``from safetensors import SafetensorError``).
SafetensorError = MetatensorError

class _Slice:
    """One tensor for partial reads (``safe_open.get_slice``)."""

    def __init__(self, file: Any, name: str) -> None:
        self._file = file
        self._name = name
        self._kind, self._dtype, self._shape = file.info(name)

    def get_shape(self) -> list[int]:
        return list(self._shape)

    def get_dtype(self) -> str:
        return self._dtype

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __getitem__(self, index: Any) -> Any:
        view = self._file.tensor(self._name)
        if isinstance(view, BlobSequence):
            return view[index]
        try:
            return view[index]
        except IndexError as e:
            raise IndexError(f"MT_BAD_RANGE: tensor {self._name!r}: {e}") from None


class safe_open:
    """A metatensor or safetensors file, mapped and validated (header only).

    ``safe_open(path, framework="np", device="cpu")``; use as a context
    manager. ``framework`` is "np"/"numpy" (read-only numpy views) or
    "pt"/"torch" (PyTorch tensors over a copy-on-write map, see
    ``tensogram.metatensor.torch``). ``path`` may be an ``http://``,
    ``https://`` or ``metatensor://`` URL: the header is fetched at open,
    each tensor on its first read.
    ``schema`` (JSON text or a dict) reads a local metatensor file through a
    newer compatible schema (framework "np"): arrays get the reader's dtypes,
    views when the layout is unchanged, converted copies otherwise
    (``is_view``).
    """

    def __init__(
        self,
        filename: str | _os.PathLike[str],
        framework: str,
        device: str = "cpu",
        schema: str | Mapping[str, Any] | None = None,
    ) -> None:
        if schema is None:
            self._file = _sources.open_file(filename, framework, device)
        else:
            if _sources.check_framework(framework, device) != "np" or _sources.is_url(filename):
                raise MetatensorError("schema= reads local files with framework='np' only")
            # A newer compatible reader schema (docs/metatensor.md, "Schema migration").
            text = schema if isinstance(schema, str) else _json.dumps(schema)
            self._file = _metatensor.File.open_with_schema(_os.fspath(filename), text)

    def __enter__(self) -> safe_open:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._file.close()

    def close(self) -> None:
        """Releases the file (arrays already returned stay valid)."""
        self._file.close()

    def keys(self) -> list[str]:
        """Tensor names, sorted."""
        return self._file.keys()

    def metadata(self) -> Optional[Dict[str, str]]:
        """``__metadata__`` (None when absent); for metatensor files the user's keys only."""
        return self._file.metadata()

    def schema(self) -> Optional[str]:
        """The metatensor schema (JSON text), or None for a plain safetensors file."""
        return self._file.schema()

    def get_tensor(self, name: str) -> Any:
        """A read-only view: ndarray, structured ndarray (struct) or BlobSequence (blob)."""
        return self._file.tensor(name)

    def get_blob_field(self, name: str, field: str) -> BlobSequence:
        """The String or List field ``field`` ("a.b" through nested records) of every record of a
        struct tensor, as a BlobSequence (the structured array holds only its BlobRefs)."""
        return self._file.blob_field(name, field)

    def is_view(self, name: str) -> bool:
        """False when ``schema=`` converted the tensor into an owned copy in the reader's types."""
        return self._file.zero_copy(name)

    def get_slice(self, name: str) -> _Slice:
        """A tensor for numpy-style slicing that reads only the needed bytes."""
        return _Slice(self._file, name)


def _load(file: Any) -> Dict[str, Any]:
    try:
        return {name: file.tensor(name) for name in file.keys()}
    finally:
        file.close()


def load_file(filename: str | _os.PathLike[str]) -> Dict[str, Any]:
    """Every tensor of a file (or URL), as ``safe_open(...).get_tensor`` returns them."""
    return _load(_sources.open_file(filename, "np"))


def load(data: bytes) -> Dict[str, Any]:
    """Every tensor of a file image (copied once into aligned memory)."""
    return _load(_metatensor.File.from_bytes(bytes(data)))
