"""Building metatensor schemas from numpy dtypes and Python types.

A metatensor schema is a JSON Schema (draft 2020-12) document whose root
properties are the file's logical tensors; binary meaning comes from
``TypeDef:`` keywords (docs/metatensor.md). These helpers return plain
``dict`` nodes of that dialect, which compose::

    particle = np.dtype([("id", "<u4"), ("mass", "<f8"), ("vel", "<f4", (3,))])
    schema = file_schema({
        "particles": tensor(schema_from_dtype(particle), ndim=1),   # struct tensor
        "names": tensor(string(), ndim=1),                          # strings
        "blobs": tensor(binary(), ndim=1),                          # bytes
        "rows": tensor(ragged("<f4"), ndim=1),                      # ragged float32 rows
    })

``save(..., schema=schema)`` writes with it; without a schema, ``save``
infers the same nodes from the values. Every node is checked by the C++
library when a file is written (``check_schema`` checks it at once).
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from .. import _metatensor

__all__ = [
    "SCHEMA_DIALECT",
    "binary",
    "check_schema",
    "file_schema",
    "fixed_array",
    "ragged",
    "scalar",
    "schema_from_dtype",
    "string",
    "struct",
    "tensor",
    "tuple_of",
]

#: The ``$schema`` of every document these helpers build.
SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

Schema = Dict[str, Any]
DTypeLike = Union[np.dtype, str, type]


def scalar(dtype: DTypeLike) -> Schema:
    """The leaf of one numeric element: ``scalar("<f4")`` is
    ``{"type": "number", "TypeDef:Float32": True}`` (bool, int8–int64,
    uint8–uint64, float16/32/64, complex64, and ml_dtypes.bfloat16)."""
    return json.loads(_metatensor.scalar_schema(np.dtype(dtype)))


def string() -> Schema:
    """A variable-length UTF-8 string (``TypeDef:String``), as a tensor element or a record field."""
    return {"type": "string", "TypeDef:String": True}


def ragged(element: Union[DTypeLike, Schema]) -> Schema:
    """A variable-length list (``TypeDef:List``) of a fixed-size element: a numpy dtype (scalar,
    structured or with a sub-array shape) or a schema node. One element of a "ragged" tensor."""
    item = element if isinstance(element, dict) else schema_from_dtype(element)
    return {"type": "array", "TypeDef:List": True, "items": item}


def binary() -> Schema:
    """A variable-length byte string: a List of ``TypeDef:Uint8`` (read back as uint8 arrays)."""
    return ragged(np.uint8)


def fixed_array(element: Union[DTypeLike, Schema], *shape: int) -> Schema:
    """A fixed-size array field (``float vel[3]``, ``m[4][4]``): ``fixed_array("<f4", 3)``."""
    if not shape:
        raise ValueError("fixed_array needs at least one dimension")
    node = element if isinstance(element, dict) else schema_from_dtype(element)
    for n in reversed(shape):
        n = int(n)
        if n < 1:
            raise ValueError(f"fixed-array dimensions are at least 1, got {n}")
        node = {"type": "array", "minItems": n, "maxItems": n, "items": node}
    return node


def struct(fields: Mapping[str, Union[DTypeLike, Schema]], *, align: Optional[int] = None) -> Schema:
    """A record type (``TypeDef:Struct``); field order is the mapping's order, laid out by the C rule.
    Values are dtypes or schema nodes; ``align`` raises the record's alignment."""
    if not fields:
        raise ValueError("a struct needs at least one field")
    props = {}
    for name, node in fields.items():
        if not isinstance(name, str):
            raise TypeError(f"field names must be str, got {type(name).__name__}")
        props[name] = node if isinstance(node, dict) else schema_from_dtype(node)
    marker: Any = True if align is None else {"align": int(align)}
    return {"type": "object", "TypeDef:Struct": marker, "properties": props, "required": list(props)}


def tuple_of(*items: Union[DTypeLike, Schema]) -> Schema:
    """A tuple (fields ``"0"``, ``"1"``, ... laid out like a struct)."""
    if not items:
        raise ValueError("a tuple needs at least one item")
    nodes = [i if isinstance(i, dict) else schema_from_dtype(i) for i in items]
    return {"type": "array", "prefixItems": nodes, "items": False}


def _text_kind(dtype: np.dtype) -> bool:
    return dtype.kind in ("U", "S")


def schema_from_dtype(dtype: DTypeLike) -> Schema:
    """The element schema of a numpy dtype, as ``metatensor from-npy`` derives it.

    * numeric dtypes → a scalar leaf (``scalar``);
    * structured dtypes → a struct whose fields follow the dtype's field order (names only:
      numpy's offsets and padding are not kept, records use the C layout rule), nested structured
      dtypes → nested structs;
    * sub-array fields (``("vel", "<f4", (3,))``) → fixed arrays;
    * ``S<n>``/``U<n>`` fields → Strings; ``V<n>`` fields → fixed arrays of ``n`` uint8.

    Raises TypeError for dtypes metatensor cannot hold (object, complex128, datetime, ...).
    """
    dt = np.dtype(dtype)
    if dt.subdtype is not None:
        base, shape = dt.subdtype
        return fixed_array(schema_from_dtype(base), *shape) if shape else schema_from_dtype(base)
    if dt.names is not None:
        fields: Dict[str, Schema] = {}
        for name in dt.names:
            field = dt.fields[name][0]
            if field.kind == "V" and field.names is None and field.subdtype is None:
                fields[name] = fixed_array(np.uint8, field.itemsize)  # named raw bytes
            else:
                fields[name] = schema_from_dtype(field)
        if not fields:
            raise TypeError("a structured dtype without named fields")
        return struct(fields)
    if _text_kind(dt):
        return string()
    if dt.kind == "O":
        raise TypeError("numpy object dtype: safetensors cannot hold Python objects (give a schema, or str, bytes "
                        "or numpy arrays)")
    try:
        return scalar(dt)
    except (TypeError, ValueError) as e:
        raise TypeError(f"numpy dtype {dt} cannot be held by metatensor ({e})") from None


def tensor(element: Union[DTypeLike, Schema], ndim: int = 1, *, dims: Optional[Sequence[Optional[int]]] = None,
           align: Optional[int] = None) -> Schema:
    """A logical tensor: ``ndim`` dimensions of ``element`` (a dtype or a schema node). ``dims``
    fixes lengths (``None`` for a free dimension) instead of ``ndim``; ``align`` is the tensor's
    placement alignment in bytes (``TypeDef:Align``, e.g. 256 for GPU libraries)."""
    node = element if isinstance(element, dict) else schema_from_dtype(element)
    bounds = list(dims) if dims is not None else [None] * int(ndim)
    for n in reversed(bounds):
        node = {"type": "array", "items": node}
        if n is not None:
            node["minItems"] = node["maxItems"] = int(n)
    if align is not None:
        node = dict(node)
        node["TypeDef:Align"] = int(align)
    return node


def file_schema(tensors: Mapping[str, Schema], *, required: Optional[Iterable[str]] = None) -> Schema:
    """The root document: one property per logical tensor (``tensor(...)`` nodes), all required
    unless ``required`` lists a subset, no other tensors allowed."""
    for name in tensors:
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be str, got {type(name).__name__}")
    return {
        "$schema": SCHEMA_DIALECT,
        "type": "object",
        "properties": dict(tensors),
        "required": list(tensors) if required is None else list(required),
        "additionalProperties": False,
    }


def schema_text(schema: Union[Schema, str, bytes]) -> str:
    """A schema as JSON text (dicts are serialised; text is passed through)."""
    if isinstance(schema, (str, bytes)):
        return schema.decode() if isinstance(schema, bytes) else schema
    if not isinstance(schema, dict):
        raise TypeError(f"a schema is a dict or JSON text, got {type(schema).__name__}")
    return json.dumps(schema, ensure_ascii=False, allow_nan=False)


def check_schema(schema: Union[Schema, str]) -> Dict[str, Dict[str, Any]]:
    """Compiles a root schema (dict or JSON text) with the C++ library and returns, per logical
    tensor, its kind ("flat", "struct", "blob"), rank, whether required, and the numpy dtype of its
    elements (``"numpy"``: the record layout as a structured dtype for struct tensors). Raises
    MetatensorError with the rule's name (``MT_SCHEMA_TYPE``, ``MT_SCHEMA_DIALECT``, ...)."""
    return _metatensor.schema_layouts(schema_text(schema))
