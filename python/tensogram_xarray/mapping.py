"""Metadata → xarray naming rules of the ``tensogram`` engine (spec 04 E.1).

Covers per-object metadata, coordinate detection, variable names, dimension
names (including the ``obj_<i>_dim_<axis>`` clash renaming) and the numpy
dtype of decoded objects.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

RESERVED_KEY = "_reserved_"
DIM_NAMES_KEY = "dim_names"

# Names (compared case-insensitively) that mark an object as a coordinate,
# mapped to the coordinate's name (spec 04 E.1).
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
        import ml_dtypes  # optional, as in the module itself (spec 04 B.4)

        return np.dtype(ml_dtypes.bfloat16)
    except ImportError:
        return np.dtype("uint16")


def numpy_dtype(descriptor: Any) -> np.dtype:
    """Numpy dtype of an object as the module decodes it (spec 04 B.4).

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

    A bitmask decodes to its flat packed bytes (spec 04 B.4), i.e.
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
    """Per-object metadata of spec 04 E.1.

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

    Spec 04 E.1: the object's ``name``, else ``param``, else ``mars.param``
    equal (case-insensitively) to a known coordinate name.
    """
    for key in ("name", "param", "mars.param"):
        value = get_path(meta, key)
        if value is not None:
            return COORDINATE_NAMES.get(str(value).lower())
    return None


def variable_name(obj_index: int, meta: Mapping[str, Any], variable_key: str | None) -> str:
    """Variable name of object *obj_index* (spec 04 E.1).

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
    Zarr store, spec 04 E.2); the chosen name is added to *taken*."""
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

    Per axis, the first rule that applies (spec 04 E.1):

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
    such a name becomes ``obj_<i>_dim_<axis>`` (spec 04 E.1).  Other names are
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

