"""A read-only Zarr (format 2) store over a Tensogram ``.tgm`` file.

::

    import zarr, xarray as xr
    from tensogram.zarr import TensogramStore

    store = TensogramStore("forecast.tgm")            # every message
    root = zarr.open(store, mode="r")
    t2m = root["message_0/t2m"][:10]

    ds = xr.open_zarr(TensogramStore("forecast.tgm", message_index=0))

Layout (see docs/zarr.md): by default the root group holds one subgroup
``message_<i>`` per message; with ``message_index=i`` that message's group
is the root.  Every object is an array named like the xarray engine names
its variables (coordinates by their coordinate name), with
``_ARRAY_DIMENSIONS`` and the descriptor facts under ``_tensogram_*``
attributes.  Chunks come back already decoded (``compressor`` and
``filters`` are null), little-endian.  Only metadata is read when the store
is built; a chunk is decoded when its key is read.
"""

from __future__ import annotations

import json
from collections import abc
import math
import operator
import os
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Sequence

import numpy as np
from zarr.errors import ReadOnlyError
from zarr.storage import BaseStore

from . import _naming

__all__ = ["TensogramStore"]

_ZARR_FORMAT = 2
_GROUP_PREFIX = "message_"


@dataclass(frozen=True)
class _Array:
    """One object exposed as a Zarr array."""

    msg_index: int
    obj_index: int
    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    dtype: np.dtype  # little-endian (or byte-sized) dtype of the chunk bytes
    bfloat16: bool  # decoded values are bfloat16, exposed as their uint16 bits
    ranged: bool  # chunks along axis 0 are read with decode_range

    def grid(self) -> tuple[int, ...]:
        """Number of chunks along each axis."""
        return tuple(math.ceil(n / c) for n, c in zip(self.shape, self.chunks))

    def chunk_names(self) -> Iterator[str]:
        """Keys of every chunk, relative to the array ("0.0", ...)."""
        if not self.shape:
            yield "0"
            return
        grid = self.grid()
        if 0 in grid:
            return
        for block in range(grid[0]):
            yield ".".join([str(block)] + ["0"] * (len(self.shape) - 1))

    def chunk_block(self, name: str) -> int | None:
        """Block index along axis 0 of chunk *name*, or None if no such chunk."""
        parts = name.split(".")
        if not self.shape:
            return 0 if parts == ["0"] else None
        if len(parts) != len(self.shape) or not all(p.isdigit() and str(int(p)) == p for p in parts):
            return None
        grid = self.grid()
        if any(int(p) >= g for p, g in zip(parts, grid)):
            return None
        return int(parts[0])

    def chunk_nbytes(self) -> int:
        return math.prod(self.chunks) * self.dtype.itemsize


def _clean_name(name: str, obj_index: int) -> str:
    """A variable name usable as a Zarr key: "/" would open a subgroup (as
    would "\\", which zarr reads as "/"), and "", ".", ".." or a leading ".z"
    would collide with paths or metadata keys."""
    name = name.replace("/", "_").replace("\\", "_")
    if name in ("", ".", "..") or name.startswith(".z"):
        return f"object_{obj_index}"
    return name


def _json_value(value: Any) -> Any:
    """*value* as something ``json`` can write: mapping keys become strings,
    bytes become hex strings, numpy scalars and arrays plain numbers and
    lists, anything else unknown its ``str``."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, dict):  # the usual case, checked before the slower ABC test
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, abc.Mapping):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, np.ndarray):
        return _json_value(value.tolist())
    if isinstance(value, np.generic):
        return _json_value(value.item())
    return str(value)


def _zarr_dtype(descriptor: Any) -> tuple[np.dtype, bool]:
    """Chunk dtype of an object (little-endian) and whether it is bfloat16.

    bfloat16 has no Zarr format 2 dtype, so its values are exposed as their
    raw 16-bit patterns (uint16) whatever numpy extension is installed.
    """
    if str(descriptor.dtype) == "bfloat16" and str(descriptor.encoding) != "simple_packing":
        return np.dtype("<u2"), True
    return _naming.numpy_dtype(descriptor).newbyteorder("<"), False


def _read_only(what: str) -> ReadOnlyError:
    error = ReadOnlyError()
    error.args = (f"TensogramStore is read-only: {what}",)
    return error


def _check_block_bytes(block_bytes: Any) -> int:
    """The ``block_bytes`` argument as an int (0 for None)."""
    if block_bytes is None:
        return 0
    if isinstance(block_bytes, bool):
        raise TypeError("block_bytes must be an integer or None, got bool")
    try:
        value = operator.index(block_bytes)
    except TypeError:
        raise TypeError(f"block_bytes must be an integer or None, got {type(block_bytes).__name__}") from None
    if value < 0:
        raise ValueError(f"block_bytes must not be negative, got {value}")
    return value


def _reopen(source: str, options: dict[str, Any]) -> "TensogramStore":
    return TensogramStore(source, **options)


class TensogramStore(BaseStore):
    """Read-only Zarr format 2 store exposing the objects of a ``.tgm`` file.

    Parameters
    ----------
    source
        Local path (str or path-like) or remote URL (``http(s)://``, ...).
    message_index
        None (default): the root group holds one subgroup ``message_<i>``
        per message.  An integer: only that message, as the root group
        (what ``xr.open_zarr`` needs); out of range → IndexError.
    variable_key
        Dotted metadata path (e.g. ``"mars.param"``) naming the arrays.
    dim_names
        Dimension names for every non-coordinate array; the length must
        equal each array's rank (else ValueError).
    storage_options
        Options for remote sources (credentials, region, ...).
    verify_hash
        Verify object hashes when a chunk covers a whole object.
    block_bytes
        None or 0 (default): one chunk per object.  A size in bytes: an
        object whose pipeline allows partial reads and which is larger is
        split along its first axis into blocks of about this size, each
        read with ``file_decode_range``, so a slice decodes only the blocks
        it touches.  Each such read still fetches the object's whole frame
        from the file, so blocks pay off for slices of large compressed
        (szip, blosc2, zfp) objects, not for reading whole arrays.

    Raises OSError when the file cannot be opened and the module's own error
    when it is not a Tensogram file.  Writing raises
    ``zarr.errors.ReadOnlyError`` (a PermissionError); any use after
    :meth:`close` raises ValueError.
    """

    _readable = True
    _writeable = False
    _erasable = False
    _listable = True

    def __init__(
        self,
        source: str | os.PathLike[str],
        *,
        message_index: int | None = None,
        variable_key: str | None = None,
        dim_names: Sequence[str] | None = None,
        storage_options: Mapping[str, Any] | None = None,
        verify_hash: bool = False,
        block_bytes: int | None = None,
    ):
        self._source = _naming.normalize_source(source)
        self._options: dict[str, Any] = {
            "message_index": message_index,
            "variable_key": variable_key,
            "dim_names": None if dim_names is None else list(dim_names),
            "storage_options": None if storage_options is None else dict(storage_options),
            "verify_hash": bool(verify_hash),
            "block_bytes": block_bytes,
        }
        self._block_bytes = _check_block_bytes(block_bytes)
        self._verify_hash = bool(verify_hash)
        self._closed = False
        self._file = _naming.open_source(self._source, storage_options)
        try:
            self._build(message_index, variable_key, dim_names)
        except BaseException:
            self._file.close()
            raise

    # ---- building the key space (metadata only) -------------------------------------------

    def _build(self, message_index: int | None, variable_key: str | None, dim_names: Sequence[str] | None) -> None:
        self._docs: dict[str, Any] = {}  # metadata documents, JSON-ready
        self._meta: dict[str, bytes] = {}  # the same, encoded
        self._arrays: dict[str, _Array] = {}
        count = len(self._file)
        if count == 0 and not self._is_empty_local_file():
            # The scan skips bytes that are not messages, so a file of
            # anything else opens as zero messages: say what it is instead.
            raise ValueError(f"FramingError: no Tensogram message found in {self._source!r}")
        if message_index is None:
            messages = [(m, f"{_GROUP_PREFIX}{m}/") for m in range(count)]
            self._put(".zgroup", {"zarr_format": _ZARR_FORMAT})
            self._put(".zattrs", {"_tensogram_message_count": count})
        else:
            messages = [(_naming.check_message_index(message_index, count, self._source), "")]
        for msg, prefix in messages:
            self._add_message(msg, prefix, variable_key, dim_names)
        self._put(".zmetadata", {"zarr_consolidated_format": 1, "metadata": dict(self._docs)})
        del self._docs

    def _put(self, key: str, document: Mapping[str, Any]) -> None:
        # No indent: json's C encoder only serves compact output, and a
        # thousand-message file has thousands of documents.
        doc = _json_value(document)
        self._docs[key] = doc
        self._meta[key] = json.dumps(doc, sort_keys=True, ensure_ascii=True).encode("ascii")

    def _is_empty_local_file(self) -> bool:
        if _naming.is_remote(self._source):
            return False
        try:
            return os.path.getsize(self._source) == 0
        except OSError:
            return False

    def _add_message(self, msg: int, prefix: str, variable_key: str | None, dim_names: Sequence[str] | None) -> None:
        info = self._file.file_decode_descriptors(msg)
        metadata = info["metadata"]
        plans = _naming.plan_message(
            metadata, list(info["descriptors"]), variable_key=variable_key, dim_names=dim_names, clean_name=_clean_name
        )
        attrs = _naming.message_attrs(metadata)
        attrs["_tensogram_message_index"] = msg
        self._put(prefix + ".zgroup", {"zarr_format": _ZARR_FORMAT})
        self._put(prefix + ".zattrs", attrs)
        for plan in plans:
            path = prefix + plan.name
            array = self._array_for(msg, plan.obj_index, plan.descriptor)
            self._arrays[path] = array
            self._put(
                path + "/.zarray",
                {
                    "zarr_format": _ZARR_FORMAT,
                    "shape": list(array.shape),
                    "chunks": list(array.chunks),
                    "dtype": array.dtype.str,
                    "compressor": None,
                    "filters": None,
                    "fill_value": None,
                    "order": "C",
                    "dimension_separator": ".",
                }
            )
            self._put(path + "/.zattrs", self._array_attrs(msg, plan))

    def _array_for(self, msg: int, obj: int, descriptor: Any) -> _Array:
        shape = _naming.decoded_shape(descriptor)
        dtype, bfloat16 = _zarr_dtype(descriptor)
        # Zarr wants every chunk extent >= 1, even along empty axes.
        chunks = tuple(max(1, n) for n in shape)
        ranged = False
        if self._block_bytes and len(shape) >= 1 and math.prod(shape) > 0 and _naming.supports_range_decode(descriptor):
            row_bytes = math.prod(shape[1:]) * dtype.itemsize
            rows = max(1, self._block_bytes // row_bytes)
            if rows < shape[0]:
                chunks = (rows,) + chunks[1:]
                ranged = True
        return _Array(msg, obj, shape, chunks, dtype, bfloat16, ranged)

    @staticmethod
    def _array_attrs(msg: int, plan: _naming.ObjectPlan) -> dict[str, Any]:
        desc = plan.descriptor
        attrs = dict(plan.attrs)
        attrs["_ARRAY_DIMENSIONS"] = list(plan.dims)
        attrs.update(
            {
                "_tensogram_message_index": msg,
                "_tensogram_object_index": plan.obj_index,
                "_tensogram_type": str(desc.obj_type),
                "_tensogram_dtype": str(desc.dtype),
                "_tensogram_shape": [int(n) for n in desc.shape],
                "_tensogram_byte_order": str(desc.byte_order),
                "_tensogram_encoding": str(desc.encoding),
                "_tensogram_filter": str(desc.filter),
                "_tensogram_compression": str(desc.compression),
                "_tensogram_params": dict(desc.params or {}),
            }
        )
        return attrs

    # ---- reading ----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("I/O operation on a closed TensogramStore")

    def _chunk(self, key: str) -> tuple[_Array, int] | None:
        path, _, name = key.rpartition("/")
        array = self._arrays.get(path)
        if array is None:
            return None
        block = array.chunk_block(name)
        return None if block is None else (array, block)

    def _decode(self, array: _Array, block: int) -> np.ndarray:
        if array.ranged:
            rows = array.chunks[0]
            start = block * rows
            stop = min(start + rows, array.shape[0])
            row_elems = math.prod(array.shape[1:])
            flat = self._file.file_decode_range(
                array.msg_index, array.obj_index, [(start * row_elems, (stop - start) * row_elems)], join=True
            )
            data = np.asarray(flat).reshape((stop - start,) + array.shape[1:])
        else:
            result = self._file.file_decode_object(array.msg_index, array.obj_index, verify_hash=self._verify_hash)
            data = np.asarray(result["data"])
        if array.bfloat16 and data.dtype.kind not in "ui":
            # An ml_dtypes bfloat16 array (native order): keep its bit patterns.
            data = data.view(np.uint16)
        # Converting (not viewing) into the little-endian dtype: values stay
        # the same whatever byte order the decoder returned.
        data = np.ascontiguousarray(data, dtype=array.dtype)
        if array.ranged and data.shape[0] < array.chunks[0]:
            # Zarr format 2 stores edge chunks at full size; the padding is never read.
            padded = np.zeros(array.chunks, dtype=array.dtype)
            padded[: data.shape[0]] = data
            data = padded
        if data.size != math.prod(array.chunks):
            raise ValueError(
                f"message {array.msg_index} object {array.obj_index}: {data.size} decoded element(s) "
                f"do not fill the chunk of shape {array.chunks}"
            )
        return data

    def __getitem__(self, key: str) -> bytes:
        self._check_open()
        value = self._meta.get(key)
        if value is not None:
            return value
        found = self._chunk(key)
        if found is None:
            raise KeyError(key)
        return self._decode(*found).tobytes()

    def __contains__(self, key: object) -> bool:
        self._check_open()
        return isinstance(key, str) and (key in self._meta or self._chunk(key) is not None)

    def __iter__(self) -> Iterator[str]:
        self._check_open()
        return self._keys()

    def _keys(self) -> Iterator[str]:
        yield from self._meta
        for path, array in self._arrays.items():
            for name in array.chunk_names():
                yield f"{path}/{name}"

    def __len__(self) -> int:
        self._check_open()
        return len(self._meta) + sum(math.prod(a.grid()) for a in self._arrays.values())

    def listdir(self, path: str = "") -> list[str]:
        """Names directly under *path* (a group or array), without decoding."""
        self._check_open()
        path = path.strip("/")
        prefix = f"{path}/" if path else ""
        names = {key[len(prefix) :].split("/", 1)[0] for key in self._meta if key.startswith(prefix)}
        array = self._arrays.get(path)
        if array is not None:
            names.update(array.chunk_names())
        names.update(p[len(prefix) :].split("/", 1)[0] for p in self._arrays if p.startswith(prefix))
        return sorted(names)

    def getsize(self, path: str = "") -> int:
        """Bytes of the value at *path*, or of the values directly under it,
        without decoding (a chunk's size is its decoded size)."""
        self._check_open()
        path = path.strip("/")
        if path in self._meta:
            return len(self._meta[path])
        found = self._chunk(path)
        if found is not None:
            return found[0].chunk_nbytes()
        prefix = f"{path}/" if path else ""
        total = sum(len(v) for k, v in self._meta.items() if k.startswith(prefix) and "/" not in k[len(prefix) :])
        array = self._arrays.get(path)
        if array is not None:
            total += array.chunk_nbytes() * math.prod(array.grid())
        return total

    # ---- read-only --------------------------------------------------------------------------

    def __setitem__(self, key: str, value: Any) -> None:
        raise _read_only(f"cannot set {key!r}")

    def __delitem__(self, key: str) -> None:
        raise _read_only(f"cannot delete {key!r}")

    def clear(self) -> None:
        raise _read_only("cannot clear")

    def rmdir(self, path: str = "") -> None:
        raise _read_only(f"cannot remove {path!r}")

    def rename(self, src_path: str, dst_path: str) -> None:
        raise _read_only(f"cannot rename {src_path!r}")

    # ---- life cycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Close the underlying file; later use raises ValueError."""
        if not self._closed:
            self._closed = True
            self._file.close()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def source(self) -> str:
        """The file this store reads (absolute path or URL)."""
        return self._source

    def __reduce__(self) -> tuple[Any, ...]:
        # A file handle does not pickle; the copy opens the file again.
        return (_reopen, (self._source, dict(self._options)))

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._arrays)} arrays"
        return f"TensogramStore({self._source!r}, {state})"
