"""The ``tensogram`` xarray engine (spec 04 E.1).

``xr.open_dataset(path, engine="tensogram", ...)`` opens one message of a
``.tgm`` file.  Only the message's metadata and descriptors are read at open
(``TensogramFile.file_decode_descriptors``); every object becomes a lazy
:class:`~tensogram_xarray.array.TensogramBackendArray`.
"""

from __future__ import annotations

import operator
import os
from typing import Any, Iterable, Sequence

import xarray as xr
from xarray.backends import BackendEntrypoint
from xarray.core import indexing

from . import _files
from .array import TensogramBackendArray
from .mapping import (
    check_dim_names_argument,
    coordinate_name,
    decoded_shape,
    extra_metadata,
    per_object_metadata,
    rename_clashing_generic_dims,
    resolve_dims,
    unique_name,
    variable_name,
    without_dim_names,
)

WIRE_VERSION_ATTR = "tensogram_wire_version"


def wire_version(metadata: Any) -> int:
    """Wire version for the dataset attribute (3 for every v0.24 message)."""
    version = getattr(metadata, "version", None)
    if version is None:
        import tensogram

        version = tensogram.WIRE_VERSION
    return int(version)


def message_count(handle: Any) -> int:
    """Number of messages in an open ``TensogramFile``."""
    return len(handle)


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


def open_message_dataset(
    source: Any,
    *,
    message_index: int = 0,
    dim_names: Sequence[str] | None = None,
    variable_key: str | None = None,
    range_threshold: float = 0.5,
    verify_hash: bool = False,
    storage_options: dict | None = None,
    drop_variables: Iterable[str] | None = None,
) -> xr.Dataset:
    """Build the lazy Dataset of one message (the body of ``open_dataset``).

    See :meth:`TensogramBackendEntrypoint.open_dataset` for the parameters.
    """
    path = _files.normalize_source(source)
    handle = _files.get_file(path, storage_options)
    index = check_message_index(message_index, message_count(handle), path)

    # Only metadata and descriptors: no payload is decoded here (E.1 "Lazy").
    info = handle.file_decode_descriptors(index)
    metadata = info["metadata"]
    descriptors = list(info["descriptors"])
    extra = extra_metadata(metadata)
    dropped = set(drop_variables or ())

    def backend_array(obj_index: int, descriptor: Any) -> TensogramBackendArray:
        """Lazy array for one object of this message (nothing decoded)."""
        return TensogramBackendArray.for_descriptor(
            path,
            index,
            obj_index,
            descriptor,
            range_threshold=range_threshold,
            verify_hash=verify_hash,
            storage_options=storage_options,
        )

    metas = [per_object_metadata(metadata, d, i) for i, d in enumerate(descriptors)]

    # Coordinates: 1-D objects named like a coordinate (first one wins).
    coords: dict[str, xr.Variable] = {}
    coord_objects: set[int] = set()
    for i, (desc, meta) in enumerate(zip(descriptors, metas)):
        cname = coordinate_name(meta)
        shape = decoded_shape(desc)
        if cname is None or len(shape) != 1 or cname in coords:
            continue
        coord_objects.add(i)
        if cname in dropped:
            continue
        data = indexing.LazilyIndexedArray(backend_array(i, desc))
        coords[cname] = xr.Variable((cname,), data, without_dim_names(meta))

    coord_sizes = {name: var.shape[0] for name, var in coords.items()}

    # Data variables: names, then dims, then clash renaming across them.
    taken: set[str] = set(coords)
    plans = []
    for i, (desc, meta) in enumerate(zip(descriptors, metas)):
        if i in coord_objects:
            continue
        name = unique_name(variable_name(i, meta, variable_key), taken)
        if name in dropped:
            continue
        shape = decoded_shape(desc)
        given = check_dim_names_argument(dim_names, len(shape), f"object {i} ({name!r}, shape {list(shape)})")
        if given is not None:
            dims = [(n, False) for n in given]
        else:
            dims = resolve_dims(shape, coord_sizes, meta, extra)
        plans.append((i, shape, dims, name, desc, meta))

    final_dims = rename_clashing_generic_dims([(p[0], p[1], p[2]) for p in plans], coord_sizes)
    data_vars: dict[str, xr.Variable] = {}
    for (i, _shape, _dims, name, desc, meta), dims in zip(plans, final_dims):
        data = indexing.LazilyIndexedArray(backend_array(i, desc))
        variable = xr.Variable(dims, data, without_dim_names(meta))
        variable.encoding.update(
            {"tensogram_message_index": index, "tensogram_object_index": i}
        )
        data_vars[name] = variable

    attrs = without_dim_names(extra)
    attrs[WIRE_VERSION_ATTR] = wire_version(metadata)
    return xr.Dataset(data_vars, coords=coords, attrs=attrs)


class TensogramBackendEntrypoint(BackendEntrypoint):
    """xarray engine ``tensogram``: read-only access to ``.tgm`` files.

    Registered through the ``xarray.backends`` entry point (spec 04 E.1)::

        ds = xr.open_dataset("file.tgm", engine="tensogram", message_index=1)
        ds = xr.open_dataset("file.tgm", engine="tensogram", chunks={})  # dask
    """

    description = "Open Tensogram .tgm messages in xarray (lazy, range-aware)"
    url = "https://github.com/ecmwf/tensogram"
    open_dataset_parameters = (
        "filename_or_obj",
        "drop_variables",
        "dim_names",
        "variable_key",
        "message_index",
        "merge_objects",
        "range_threshold",
        "storage_options",
        "verify_hash",
    )

    def open_dataset(
        self,
        filename_or_obj: Any,
        *,
        drop_variables: str | Iterable[str] | None = None,
        dim_names: Sequence[str] | None = None,
        variable_key: str | None = None,
        message_index: int = 0,
        merge_objects: bool = False,
        range_threshold: float = 0.5,
        storage_options: dict | None = None,
        verify_hash: bool = False,
    ) -> xr.Dataset:
        """Open one message of a ``.tgm`` file as a lazy :class:`xr.Dataset`.

        Parameters
        ----------
        filename_or_obj
            Local path (str or path-like) or remote URL.
        drop_variables
            Variable or coordinate names to leave out.
        dim_names
            Dimension names for every data variable; length must equal the
            variable's number of axes (else ValueError).
        variable_key
            Dotted metadata path (e.g. ``"mars.param"``) naming variables.
        message_index
            Message to open (0-based); out of range → IndexError.
        merge_objects
            If True, return the first dataset of :func:`open_datasets`
            (all messages, grouped and stacked) instead.
        range_threshold
            Partial reads are used when the requested element count is below
            this fraction of the object's element count.
        storage_options
            Options for remote sources (credentials, region, …).
        verify_hash
            Verify object hashes on full-object reads.
        """
        if isinstance(drop_variables, str):
            drop_variables = [drop_variables]
        if merge_objects:
            from .grouping import open_datasets

            datasets = open_datasets(
                filename_or_obj,
                dim_names=dim_names,
                variable_key=variable_key,
                range_threshold=range_threshold,
                verify_hash=verify_hash,
                storage_options=storage_options,
            )
            if not datasets:
                return xr.Dataset()
            first = datasets[0]
            if drop_variables:
                first = first.drop_vars([v for v in drop_variables if v in first.variables])
            return first
        return open_message_dataset(
            filename_or_obj,
            message_index=message_index,
            dim_names=dim_names,
            variable_key=variable_key,
            range_threshold=range_threshold,
            verify_hash=verify_hash,
            storage_options=storage_options,
            drop_variables=drop_variables,
        )

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        """True for path-like sources whose name ends in ``.tgm``."""
        try:
            text = os.fspath(filename_or_obj)
        except TypeError:
            return False
        if isinstance(text, bytes):
            text = os.fsdecode(text)
        # Remote URLs may carry a query string after the file name.
        text = text.split("?", 1)[0]
        return os.path.splitext(text)[1].lower() == ".tgm"
