"""Writing every kind of logical tensor: flat arrays, numpy structured arrays (struct tensors),
strings, bytes and ragged lists (blob tensors).

The values are turned into bytes in the layout the C++ library computes for the schema
(``check_schema``); the library then checks them (record padding, BOOL bytes, UTF-8, dims) and
writes the canonical file, so the output is byte-identical to the CLI's and the C++ API's for the
same schema and values.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from .. import _metatensor
from ._schema import Schema, binary, check_schema, fixed_array, file_schema, ragged, schema_from_dtype, schema_text
from ._schema import string as string_schema
from ._schema import tensor as tensor_schema

__all__ = ["infer_schema", "save", "save_file"]

_TEXT = (str, bytes)
_BYTES = (bytes, bytearray, memoryview)


def _coded_error(code: str, message: str) -> Exception:
    e = _metatensor.MetatensorError(f"{code}: {message}")
    e.code = code
    return e


def _nested(value: Any, is_leaf: Callable[[Any], bool], where: str) -> Tuple[Tuple[int, ...], List[Any]]:
    """(dims, leaves in C order) of nested lists/tuples (or an object/text ndarray) of leaves."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "OUS":
        return tuple(value.shape), list(value.reshape(-1))
    if is_leaf(value):
        return (), [value]
    if isinstance(value, (list, tuple)):
        if not value:
            return (0,), []
        if all(map(is_leaf, value)):  # the common one-dimensional case, without a call per element
            return (len(value),), list(value)
        parts = [_nested(v, is_leaf, f"{where}[{i}]") for i, v in enumerate(value)]
        dims = parts[0][0]
        for i, (d, _) in enumerate(parts):
            if d != dims:
                raise _coded_error("MT_SHAPE", f"{where}: nested lists of different lengths at [{i}] "
                                               f"(dims {d} vs {dims}); a ragged tensor's rows are arrays")
        return (len(value),) + dims, [leaf for _, leaves in parts for leaf in leaves]
    raise TypeError(f"{where}: expected nested lists of str, bytes or numpy arrays, got {type(value).__name__}")


def _cut_nul(v: Any) -> Any:
    # numpy S<n>/U<n> text ends at the first NUL, as `metatensor from-npy` reads it.
    if isinstance(v, np.bytes_):
        return bytes(v).split(b"\0", 1)[0]
    if isinstance(v, np.str_):
        return str(v).split("\0", 1)[0]
    return v


def _cast(src: np.ndarray, dtype: np.dtype, where: str) -> np.ndarray:
    """`src` as `dtype` (little-endian, C order) when numpy casts it without loss."""
    if src.dtype != dtype and not np.can_cast(src.dtype, dtype, "safe"):
        raise TypeError(f"{where}: numpy dtype {src.dtype} does not fit the schema's {dtype} "
                        "(only lossless casts are made)")
    return np.ascontiguousarray(src, dtype=dtype)


def _fill_plain(out: np.ndarray, src: np.ndarray, where: str) -> None:
    """Copies a structured array into records of the layout dtype `out`, field by field by name
    (records without String/List fields)."""
    names = out.dtype.names
    if names is None:
        if src.dtype.kind == "V" and src.dtype.names is None:  # named raw bytes -> uint8[n]
            out[...] = np.ascontiguousarray(src).view(np.uint8).reshape(out.shape)
            return
        if src.dtype.names is not None:
            raise TypeError(f"{where}: a record where the schema has {out.dtype}")
        if src.dtype != out.dtype and not np.can_cast(src.dtype, out.dtype, "safe"):
            raise TypeError(f"{where}: numpy dtype {src.dtype} does not fit the schema's {out.dtype} "
                            "(only lossless casts are made)")
        out[...] = src
        return
    have = src.dtype.names or ()
    missing = [n for n in names if n not in have]
    extra = [n for n in have if n not in names]
    if missing or extra:
        raise TypeError(f"{where}: the values' fields {list(have)} are not the schema's {list(names)}")
    for n in names:
        _fill_plain(out[n], src[n], f"{where}.{n}")


def _list_bytes(v: Any, element: np.dtype, where: str) -> bytes:
    """One List element's packed little-endian bytes."""
    base, eshape = element.subdtype if element.subdtype is not None else (element, ())
    if isinstance(v, _BYTES):
        if base != np.uint8 or eshape:
            raise TypeError(f"{where}: bytes given for a list of {element}")
        return bytes(v)
    if not isinstance(v, np.ndarray):
        v = np.asarray(v)
    if v.ndim != 1 + len(eshape) or tuple(v.shape[1:]) != tuple(eshape):
        raise ValueError(f"{where}: an array of shape {v.shape} for a list of {element} "
                         f"(expected (n, {', '.join(map(str, eshape))}))" if eshape else
                         f"{where}: an array of shape {v.shape} for a list of {element} (expected 1-D)")
    if v.dtype == base and v.flags.c_contiguous:
        return v.tobytes()  # already the packed elements (base is little-endian)
    out = np.zeros(v.shape, dtype=base)
    if base.names is not None:
        _fill_plain(out, v, where)
    else:
        out[...] = _cast(v, base, where)
    return out.tobytes()


def _fill_records(out: np.ndarray, src: np.ndarray, fields: List[Dict[str, Any]], prefix: str,
                  blobs: List[Tuple[str, str, List[Any]]], where: str) -> None:
    have = src.dtype.names or ()
    names = [f["name"] for f in fields]
    missing = [n for n in names if n not in have]
    extra = [n for n in have if n not in names]
    if missing or extra:
        raise TypeError(f"{where}: the values' fields {list(have)} are not the schema's {names}")
    for f in fields:
        name = f["name"]
        shape = tuple(f["shape"])
        s, o = src[name], out[name]
        at = f"{where}.{name}"
        indices = list(np.ndindex(*shape)) if shape else [()]
        if f["type"] in ("string", "list"):
            for idx in indices:
                path = prefix + name + "".join(f"[{i}]" for i in idx)
                values = np.asarray(s[(Ellipsis,) + idx] if idx else s).reshape(-1)
                if f["type"] == "string":
                    items = [_cut_nul(v) for v in values]
                else:
                    items = [_list_bytes(v, f["element"], f"{at} record {r}") for r, v in enumerate(values)]
                blobs.append((path, f["type"], items))
        elif f["type"] == "record":
            for idx in indices:
                sub = "".join(f"[{i}]" for i in idx)
                _fill_records(o[(Ellipsis,) + idx] if idx else o, s[(Ellipsis,) + idx] if idx else s,
                              f["record"], prefix + name + sub + ".", blobs, at + sub)
        else:
            _fill_plain(o, s, at)


def _is_text_leaf(v: Any) -> bool:
    return isinstance(v, _TEXT)


def _is_ragged_leaf(v: Any) -> bool:
    return isinstance(v, np.ndarray) or isinstance(v, _BYTES)


def _flat_array(value: Any) -> np.ndarray:
    array = np.asarray(value)
    # The format stores C-order little-endian bytes (asarray keeps 0-d arrays 0-d).
    return np.asarray(array, dtype=array.dtype.newbyteorder("<"), order="C")


def _infer_node(name: str, value: Any) -> Schema:
    """The tensor schema `save` uses for a value when no schema is given."""
    if isinstance(value, np.ndarray):
        if value.dtype.names is not None:
            return tensor_schema(schema_from_dtype(value.dtype), value.ndim)
        if value.dtype.kind in "US":
            return tensor_schema(string_schema(), value.ndim)
        if value.dtype.kind != "O":
            return tensor_schema(schema_from_dtype(value.dtype), value.ndim)
    elif not isinstance(value, (list, tuple, str, bytes)):
        array = np.asarray(value)
        if array.dtype.kind in "OUSV":
            raise TypeError(f"tensor {name!r}: a {type(value).__name__} value, which safetensors cannot hold")
        return tensor_schema(schema_from_dtype(array.dtype), array.ndim)
    try:
        dims, leaves = _nested(value, lambda v: _is_text_leaf(v) or _is_ragged_leaf(v), f"tensor {name!r}")
    except TypeError:
        dims, leaves = None, []
    if dims is None or not leaves:
        array = np.asarray(value)  # numbers in lists, or empty lists: a flat tensor
        if array.dtype.kind in "OUSV":
            raise TypeError(f"tensor {name!r}: values of type {type(value).__name__}, which safetensors "
                            "cannot hold (give str, bytes or numpy arrays, or a schema)")
        return tensor_schema(schema_from_dtype(array.dtype), array.ndim)
    for v in leaves:
        if not (_is_text_leaf(v) or _is_ragged_leaf(v)):
            raise TypeError(f"tensor {name!r}: an element of type {type(v).__name__}, which safetensors cannot hold "
                            "(give str, bytes or numpy arrays, or a schema)")
    kinds = {str if isinstance(v, str) else bytes if isinstance(v, _BYTES) else np.ndarray for v in leaves}
    if len(kinds) != 1:
        raise TypeError(f"tensor {name!r}: mixes {sorted(k.__name__ for k in kinds)}; one tensor holds strings, "
                        "bytes or arrays")
    kind = kinds.pop()
    if kind is str:
        return tensor_schema(string_schema(), len(dims))
    if kind is bytes:
        return tensor_schema(binary(), len(dims))
    first = leaves[0]
    for i, a in enumerate(leaves):
        if a.dtype != first.dtype:
            raise TypeError(f"tensor {name!r}: ragged rows of mismatched dtypes ({first.dtype} at 0, {a.dtype} at "
                            f"{i}); convert them to one dtype")
        if a.ndim < 1 or a.shape[1:] != first.shape[1:]:
            raise ValueError(f"tensor {name!r}: ragged rows vary along their first axis only (shape {a.shape} at "
                             f"{i}, {first.shape} at 0)")
    element: Union[np.dtype, Schema] = first.dtype
    if first.ndim > 1:
        element = fixed_array(schema_from_dtype(first.dtype), *first.shape[1:])
    return tensor_schema(ragged(element), len(dims))


def infer_schema(tensor_dict: Mapping[str, Any]) -> Schema:
    """The schema ``save`` writes ``tensor_dict`` with when none is given:

    * numeric arrays (and anything ``numpy.asarray`` makes numeric) → flat tensors;
    * structured arrays → struct tensors (``schema_from_dtype``);
    * ``str`` values, ``S``/``U`` arrays, and nested lists of ``str`` → String tensors;
    * nested lists of ``bytes`` → bytes tensors (Lists of uint8);
    * nested lists of numpy arrays of one dtype → ragged tensors (Lists along the arrays' first axis;
      further axes become a fixed-size element).

    Every tensor is required, in the mapping's order.
    """
    nodes = {}
    for name, value in tensor_dict.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be str, got {type(name).__name__}")
        nodes[name] = _infer_node(name, value)
    return file_schema(nodes)


def _entry(name: str, value: Any, layout: Dict[str, Any]) -> tuple:
    kind = layout["kind"]
    where = f"tensor {name!r}"
    if kind == "flat":
        target = layout.get("numpy")
        if isinstance(value, np.ndarray) or target is None:
            array = _flat_array(value)
            if target is not None and array.dtype.newbyteorder("<") != target.newbyteorder("<"):
                if array.dtype.kind not in "OUSV" and np.can_cast(array.dtype, target, "safe"):
                    array = np.asarray(array, dtype=target.newbyteorder("<"), order="C")
        else:
            array = np.asarray(np.asarray(value, dtype=target), dtype=target.newbyteorder("<"), order="C")
        if array.dtype.kind in "OUSV":
            raise TypeError(f"{where}: numpy dtype {array.dtype}, which safetensors cannot hold in a flat tensor")
        return (name, "flat", list(array.shape), array)
    if kind == "struct":
        if not isinstance(value, np.ndarray) or value.dtype.names is None:
            raise TypeError(f"{where}: a struct tensor takes a numpy structured array, got "
                            f"{type(value).__name__}")
        records = np.zeros(value.shape, dtype=layout["numpy"])
        blobs: List[Tuple[str, str, List[Any]]] = []
        _fill_records(records, value, layout["record"], "", blobs, where)
        return (name, "struct", list(value.shape), records, blobs)
    # blob: strings, or lists (bytes / ragged arrays)
    if layout["item"] == "string":
        dims, leaves = _nested(value, _is_text_leaf, where)
        if isinstance(value, np.ndarray):  # numpy text ends at the first NUL
            leaves = [_cut_nul(v) for v in leaves]
        return (name, "string", list(dims), leaves)
    dims, leaves = _nested(value, _is_ragged_leaf, where)
    element = layout["element"]
    return (name, "list", list(dims), [_list_bytes(v, element, f"{where} element {i}") for i, v in enumerate(leaves)])


def _prepare(tensor_dict: Mapping[str, Any], schema: Optional[Union[Schema, str]]) -> Tuple[str, list]:
    if not isinstance(tensor_dict, Mapping):
        raise TypeError(f"expected a mapping of tensor names to values, got {type(tensor_dict).__name__}")
    text = schema_text(infer_schema(tensor_dict) if schema is None else schema)
    layouts = check_schema(text)
    entries = []
    for name, value in tensor_dict.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be str, got {type(name).__name__}")
        layout = layouts.get(name)
        if layout is None:
            raise _coded_error("MT_TENSOR_SET", f"tensor {name!r} is not a property of the schema")
        entries.append(_entry(name, value, layout))
    return text, entries


def save(tensor_dict: Mapping[str, Any], metadata: Optional[Mapping[str, str]] = None, *,
         schema: Optional[Union[Schema, str]] = None, alignment: int = 64) -> bytes:
    """The metatensor file image of ``{name: value}`` and user metadata.

    Values: numeric arrays (flat tensors), numpy structured arrays (struct tensors), strings and
    nested lists of ``str`` (String tensors), nested lists of ``bytes`` (bytes tensors), lists of
    numpy arrays (ragged tensors). ``schema`` (a root schema dict or JSON text, see ``file_schema``)
    says how to store them; without it ``infer_schema`` derives one. ``alignment`` is the file
    alignment (a power of two, 16 to 65536). The same schema and values always give the same bytes,
    those of the C++ writer and the ``metatensor`` CLI.
    """
    text, entries = _prepare(tensor_dict, schema)
    return _metatensor.write(text, entries, dict(metadata or {}), int(alignment))


def save_file(tensor_dict: Mapping[str, Any], filename: Union[str, "os.PathLike[str]"],
              metadata: Optional[Mapping[str, str]] = None, *, schema: Optional[Union[Schema, str]] = None,
              alignment: int = 64) -> None:
    """``save`` written atomically to ``filename`` (temporary file + rename)."""
    text, entries = _prepare(tensor_dict, schema)
    _metatensor.write(text, entries, dict(metadata or {}), int(alignment), os.fspath(filename))

