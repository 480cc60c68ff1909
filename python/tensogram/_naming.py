"""How the messages of a ``.tgm`` file are laid out as named arrays.

One copy of the rules shared by the xarray engine (``tensogram_xarray``) and
the Zarr store (``tensogram.zarr``): opening a source, per-object metadata,
coordinate detection, variable names, dimension names (including the
``obj_<i>_dim_<axis>`` clash renaming), the numpy dtype of decoded objects,
and which pipelines allow partial reads.  Pure Python, no xarray or zarr
import, so either front end works without the other installed.
"""

from __future__ import annotations

import math
import operator
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

RESERVED_KEY = "_reserved_"
DIM_NAMES_KEY = "dim_names"

# Names (compared case-insensitively) that mark an object as a coordinate,
# mapped to the coordinate's name.
COORDINATE_NAMES: dict[str, str] = {
    "lat": "latitude",
    "latitude": "latitude",
    "lon": "longitude",
    "longitude": "longitude",
    "x": "x",
    "y": "y",
    "time": "time",
    "level": "level",
    "pressure": "pressure",
    "height": "height",
    "depth": "depth",
    "frequency": "frequency",
    "step": "step",
}

# Keys tried, in order, for a variable's name when no variable_key is given.
VARIABLE_NAME_KEYS = ("name", "mars.param", "param", "mars.shortName", "shortName")


# ---------------------------------------------------------------------------
# Dtypes
# ---------------------------------------------------------------------------


def _bfloat16_dtype() -> np.dtype:
    try:
        import ml_dtypes  # optional, as in the module itself

        return np.dtype(ml_dtypes.bfloat16)
    except ImportError:
        return np.dtype("uint16")


def numpy_dtype(descriptor: Any) -> np.dtype:
    """Numpy dtype of an object as the module decodes it.

    ``simple_packing`` always decodes to float64; ``bitmask`` to uint8 bytes;
    ``bfloat16`` to ``ml_dtypes.bfloat16`` when available, else uint16.
    """
    if str(descriptor.encoding) == "simple_packing":
        return np.dtype("float64")
    name = str(descriptor.dtype)
    if name == "bitmask":
        return np.dtype("uint8")
    if name == "bfloat16":
        return _bfloat16_dtype()
    return np.dtype(name)


def decoded_shape(descriptor: Any) -> tuple[int, ...]:
    """Shape of the decoded array: the descriptor's shape, except bitmasks.

    A bitmask decodes to its flat packed bytes, i.e.
    ``ceil(bits / 8)`` uint8 values.
    """
    shape = tuple(int(n) for n in descriptor.shape)
    if str(descriptor.dtype) == "bitmask":
        return ((math.prod(shape) + 7) // 8,)
    return shape


# ---------------------------------------------------------------------------
# Metadata helpers
# ---------------------------------------------------------------------------


def get_path(meta: Mapping[str, Any], dotted: str) -> Any:
    """Value at a dotted path (``"mars.param"``) in nested dicts, or None."""
    current: Any = meta
    for part in dotted.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return None
        current = current[part]
    return current


def drop_path(meta: dict, dotted: str) -> None:
    """Remove the dotted path from nested dicts in place (no-op if absent).

    Parent dicts left empty by the removal are removed too.
    """
    parts = dotted.split(".")
    chain = [meta]
    for part in parts[:-1]:
        nxt = chain[-1].get(part) if isinstance(chain[-1], dict) else None
        if not isinstance(nxt, dict):
            return
        chain.append(nxt)
    if not isinstance(chain[-1], dict) or parts[-1] not in chain[-1]:
        return
    del chain[-1][parts[-1]]
    for depth in range(len(chain) - 1, 0, -1):
        if chain[depth]:
            break
        del chain[depth - 1][parts[depth - 1]]


def flatten(meta: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Flatten nested dicts to dotted keys (``{"mars": {"date": 1}}`` →
    ``{"mars.date": 1}``); lists and scalars are leaves."""
    flat: dict[str, Any] = {}
    for key, value in meta.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def hashable(value: Any) -> Any:
    """A hashable stand-in for a metadata value (dicts/lists → tuples)."""
    if isinstance(value, Mapping):
        return ("__map__",) + tuple(sorted((str(k), hashable(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("__seq__",) + tuple(hashable(v) for v in value)
    # Keep 1 and 1.0 and True apart: they are different metadata values.
    return (type(value).__name__, value)


def base_entry(metadata: Any, obj_index: int) -> dict[str, Any]:
    """``base[obj_index]`` without ``_reserved_`` (empty if missing)."""
    base = list(metadata.base or [])
    if obj_index >= len(base) or not isinstance(base[obj_index], Mapping):
        return {}
    return {k: v for k, v in base[obj_index].items() if k != RESERVED_KEY}


def per_object_metadata(metadata: Any, descriptor: Any, obj_index: int) -> dict[str, Any]:
    """Per-object metadata of the xarray engine.

    ``base[i]`` minus ``_reserved_``, with the descriptor's parameters
    filling keys that are absent.
    """
    meta = base_entry(metadata, obj_index)
    for key, value in dict(descriptor.params or {}).items():
        meta.setdefault(key, value)
    return meta


def extra_metadata(metadata: Any) -> dict[str, Any]:
    """Message-level ``_extra_`` as a plain dict."""
    extra = metadata.extra
    return dict(extra) if extra else {}


def without_dim_names(meta: Mapping[str, Any]) -> dict[str, Any]:
    """Copy of *meta* without the structural ``dim_names`` key (E.1 attrs)."""
    return {k: v for k, v in meta.items() if k != DIM_NAMES_KEY}


# ---------------------------------------------------------------------------
# Coordinates and variable names
# ---------------------------------------------------------------------------


def coordinate_name(meta: Mapping[str, Any]) -> str | None:
    """Coordinate name if the object is a known coordinate, else None.

    The object's ``name``, else ``param``, else ``mars.param``
    equal (case-insensitively) to a known coordinate name.
    """
    for key in ("name", "param", "mars.param"):
        value = get_path(meta, key)
        if value is not None:
            return COORDINATE_NAMES.get(str(value).lower())
    return None


def variable_name(obj_index: int, meta: Mapping[str, Any], variable_key: str | None) -> str:
    """Variable name of object *obj_index*.

    The value at ``variable_key`` if given and present, else the first
    present of ``name``, ``mars.param``, ``param``, ``mars.shortName``,
    ``shortName``, else ``object_<i>``.
    """
    keys: list[str] = [variable_key] if variable_key else []
    keys.extend(VARIABLE_NAME_KEYS)
    for key in keys:
        value = get_path(meta, key)
        if value is not None:
            return str(value)
    return f"object_{obj_index}"


def unique_name(name: str, taken: set[str]) -> str:
    """*name*, or ``name_1``, ``name_2``… if already taken (same rule as the
    Zarr store); the chosen name is added to *taken*."""
    candidate = name
    counter = 1
    while candidate in taken:
        candidate = f"{name}_{counter}"
        counter += 1
    taken.add(candidate)
    return candidate


# ---------------------------------------------------------------------------
# Dimension names
# ---------------------------------------------------------------------------


def check_dim_names_argument(dim_names: Sequence[str] | None, ndim: int, what: str) -> list[str] | None:
    """Validate the ``dim_names`` argument against an object's rank.

    Raises ValueError naming the object when the length differs from ndim.
    """
    if dim_names is None:
        return None
    if isinstance(dim_names, str):
        raise ValueError(f"dim_names must be a sequence of names, not the string {dim_names!r}")
    names = [str(n) for n in dim_names]
    if len(names) != ndim:
        raise ValueError(
            f"dim_names has {len(names)} entries but {what} has {ndim} dimension(s); "
            f"provide exactly {ndim} names"
        )
    return names


def _axis_list(value: Any, ndim: int) -> list[str] | None:
    """A usable per-axis name list: one distinct non-empty string per axis."""
    if not isinstance(value, (list, tuple)) or len(value) != ndim:
        return None
    if not all(isinstance(v, str) and v for v in value):
        return None
    if len(set(value)) != ndim:
        return None
    return list(value)


def _size_mapping(value: Any) -> dict[int, str]:
    """``{size: name}`` hint of ``_extra_["dim_names"]`` with int sizes."""
    if not isinstance(value, Mapping):
        return {}
    mapping: dict[int, str] = {}
    for size, name in value.items():
        try:
            size_int = int(size)
        except (TypeError, ValueError):
            continue
        if isinstance(name, str) and name:
            mapping[size_int] = name
    return mapping


def resolve_dims(
    shape: Sequence[int],
    coord_sizes: Mapping[str, int],
    base_meta: Mapping[str, Any],
    extra_meta: Mapping[str, Any],
) -> list[tuple[str, bool]]:
    """Dimension names of one data object, without the ``dim_names`` argument.

    Per axis, the first rule that applies:

    1. a coordinate whose length equals the axis length (each coordinate is
       used for one axis at most);
    2. ``base[i]["dim_names"]`` — a list with one distinct non-empty string
       per axis;
    3. ``_extra_["dim_names"]`` — a list (one per axis) or a
       ``{size: name}`` mapping;
    4. ``dim_<axis>``.

    Returns ``(name, generic)`` pairs; ``generic`` marks rule 4 names, the
    only ones eligible for clash renaming.
    """
    ndim = len(shape)
    base_list = _axis_list(base_meta.get(DIM_NAMES_KEY), ndim)
    extra_hint = extra_meta.get(DIM_NAMES_KEY)
    extra_list = _axis_list(extra_hint, ndim)
    extra_sizes = _size_mapping(extra_hint)

    dims: list[tuple[str, bool]] = []
    used: set[str] = set()
    for axis, size in enumerate(shape):
        chosen: str | None = None
        for cname, csize in coord_sizes.items():
            if csize == size and cname not in used:
                chosen = cname
                break
        if chosen is None and base_list is not None and base_list[axis] not in used:
            chosen = base_list[axis]
        if chosen is None and extra_list is not None and extra_list[axis] not in used:
            chosen = extra_list[axis]
        if chosen is None and size in extra_sizes and extra_sizes[size] not in used:
            chosen = extra_sizes[size]
        if chosen is None:
            dims.append((f"dim_{axis}", True))
        else:
            dims.append((chosen, False))
            used.add(chosen)
    return dims


def rename_clashing_generic_dims(
    plans: Sequence[tuple[int, Sequence[int], Sequence[tuple[str, bool]]]],
    fixed_sizes: Mapping[str, int],
) -> list[tuple[str, ...]]:
    """Rename generic ``dim_<axis>`` names that would clash in size.

    *plans* holds ``(obj_index, shape, [(name, generic), ...])`` per data
    variable; *fixed_sizes* the sizes of coordinate dimensions.  A name
    claimed with two or more different sizes is a clash; each generic use of
    such a name becomes ``obj_<i>_dim_<axis>``.  Other names are
    never renamed (a clash among them is the user's to resolve and xarray
    reports it).
    """
    sizes: dict[str, set[int]] = {name: {size} for name, size in fixed_sizes.items()}
    for _, shape, dims in plans:
        for (name, _generic), size in zip(dims, shape):
            sizes.setdefault(name, set()).add(int(size))
    clashing = {name for name, seen in sizes.items() if len(seen) > 1}
    result: list[tuple[str, ...]] = []
    for obj_index, _shape, dims in plans:
        result.append(
            tuple(
                f"obj_{obj_index}_dim_{axis}" if generic and name in clashing else name
                for axis, (name, generic) in enumerate(dims)
            )
        )
    return result



# ---------------------------------------------------------------------------
# Sources, messages and partial reads
# ---------------------------------------------------------------------------

WIRE_VERSION_ATTR = "tensogram_wire_version"

# Codecs for which the module serves partial reads; zfp only qualifies in
# fixed-rate mode, checked separately.
_RANGE_CODECS = frozenset({"none", "szip", "blosc2"})


def is_remote(source: str) -> bool:
    """Return True when *source* is a remote URL the module opens remotely
    (``tensogram.is_remote_url``, the single source of truth for which
    schemes are remote)."""
    import tensogram

    return bool(tensogram.is_remote_url(source))


def normalize_source(source: Any) -> str:
    """Turn a path-like *source* into a string that still names the same file
    from another process or working directory: local paths are made
    absolute, remote URLs are kept as they are."""
    text = os.fspath(source)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if is_remote(text):
        return text
    return os.path.abspath(text)


def open_source(source: str, storage_options: Mapping[str, Any] | None = None) -> Any:
    """Open *source* with the ``tensogram`` module.

    Remote URLs go through ``TensogramFile.open_remote`` so that
    ``storage_options`` reach the object store; local paths use
    ``TensogramFile.open``.
    """
    import tensogram

    if is_remote(source):
        options = {str(k): str(v) for k, v in (storage_options or {}).items()}
        return tensogram.TensogramFile.open_remote(source, options)
    return tensogram.TensogramFile.open(source)


def check_message_index(message_index: Any, count: int, source: str) -> int:
    """Validate *message_index* against the file's message count.

    Raises TypeError for a non-integer and IndexError (naming the index and
    the count) when it is outside ``0 .. count-1``.
    """
    if isinstance(message_index, bool):
        raise TypeError("message_index must be an integer, got bool")
    try:
        message_index = operator.index(message_index)
    except TypeError:
        raise TypeError(
            f"message_index must be an integer, got {type(message_index).__name__}"
        ) from None
    if not 0 <= message_index < count:
        raise IndexError(
            f"message_index {message_index} is out of range: {source!r} holds {count} "
            f"message(s) (valid indices 0..{count - 1})"
        )
    return message_index


def wire_version(metadata: Any) -> int:
    """Wire version of a message (3 for every v0.24 message)."""
    version = getattr(metadata, "version", None)
    if version is None:
        import tensogram

        version = tensogram.WIRE_VERSION
    return int(version)


def message_attrs(metadata: Any) -> dict[str, Any]:
    """Attributes of a message as a whole: ``_extra_`` without ``dim_names``,
    plus ``tensogram_wire_version``."""
    attrs = without_dim_names(extra_metadata(metadata))
    attrs[WIRE_VERSION_ATTR] = wire_version(metadata)
    return attrs


def supports_range_decode(descriptor: Any) -> bool:
    """Return True when *descriptor*'s pipeline allows ``decode_range``.

    The filter is not ``shuffle`` and the compression is ``none``, ``szip``,
    ``blosc2``, or ``zfp`` with ``zfp_mode == "fixed_rate"``.  Bitmask
    objects decode to packed bytes, whose byte positions are not element
    positions, so they always take the full-decode path.
    """
    if str(descriptor.dtype) == "bitmask":
        return False
    if str(descriptor.filter) == "shuffle":
        return False
    codec = str(descriptor.compression)
    if codec in _RANGE_CODECS:
        return True
    if codec == "zfp":
        params = descriptor.params or {}
        return params.get("zfp_mode") == "fixed_rate"
    return False


# ---------------------------------------------------------------------------
# Laying out one message
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ObjectPlan:
    """Where one object of a message goes: its name, dimensions and
    attributes; ``coordinate`` marks a 1-D coordinate object, whose only
    dimension carries its own name."""

    obj_index: int
    name: str
    dims: tuple[str, ...]
    attrs: dict[str, Any]
    coordinate: bool
    descriptor: Any


def plan_message(
    metadata: Any,
    descriptors: Sequence[Any],
    *,
    variable_key: str | None = None,
    dim_names: Sequence[str] | None = None,
    drop: Iterable[str] = (),
    clean_name: Callable[[str, int], str] | None = None,
) -> list[ObjectPlan]:
    """Names and dimensions of every object of one message.

    Coordinates first (a 1-D object named like a coordinate; the first one of
    each name wins, later ones are ordinary variables), then the data
    variables in object order.  Variable names follow :func:`variable_name`
    made unique with :func:`unique_name`; *clean_name* (``(name, obj_index)``
    → name) may rewrite a name before it is made unique, for front ends
    whose names have a restricted alphabet.  Objects whose final name is in
    *drop* are left out (a dropped coordinate still does not become a
    variable).  Dimensions come from the *dim_names* argument (its length
    must equal each variable's rank, else ValueError) or
    :func:`resolve_dims`, then :func:`rename_clashing_generic_dims`.
    """
    dropped = set(drop)
    metas = [per_object_metadata(metadata, d, i) for i, d in enumerate(descriptors)]
    extra = extra_metadata(metadata)

    coords: list[ObjectPlan] = []
    coord_objects: set[int] = set()
    for i, (desc, meta) in enumerate(zip(descriptors, metas)):
        cname = coordinate_name(meta)
        if cname is None or len(decoded_shape(desc)) != 1 or cname in {c.name for c in coords}:
            continue
        coord_objects.add(i)
        if cname in dropped:
            continue
        coords.append(ObjectPlan(i, cname, (cname,), without_dim_names(meta), True, desc))

    coord_sizes = {c.name: decoded_shape(c.descriptor)[0] for c in coords}
    taken: set[str] = set(coord_sizes)
    pending = []
    for i, (desc, meta) in enumerate(zip(descriptors, metas)):
        if i in coord_objects:
            continue
        raw = variable_name(i, meta, variable_key)
        name = unique_name(clean_name(raw, i) if clean_name else raw, taken)
        if name in dropped:
            continue
        shape = decoded_shape(desc)
        given = check_dim_names_argument(dim_names, len(shape), f"object {i} ({name!r}, shape {list(shape)})")
        dims = [(n, False) for n in given] if given is not None else resolve_dims(shape, coord_sizes, meta, extra)
        pending.append((i, shape, dims, name, desc, meta))

    final_dims = rename_clashing_generic_dims([(p[0], p[1], p[2]) for p in pending], coord_sizes)
    variables = [
        ObjectPlan(i, name, tuple(dims), without_dim_names(meta), False, desc)
        for (i, _shape, _dims, name, desc, meta), dims in zip(pending, final_dims)
    ]
    return coords + variables
