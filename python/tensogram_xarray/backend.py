"""The ``tensogram`` xarray engine.

``xr.open_dataset(path, engine="tensogram", ...)`` opens one message of a
``.tgm`` file.  Only the message's metadata and descriptors are read at open
(``TensogramFile.file_decode_descriptors``); every object becomes a lazy
:class:`~tensogram_xarray.array.TensogramBackendArray`.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Sequence

import xarray as xr
from xarray.backends import BackendEntrypoint
from xarray.core import indexing

from tensogram._naming import (
    WIRE_VERSION_ATTR,
    check_message_index,
    message_attrs,
    plan_message,
    wire_version,
)

from . import _files
from .array import TensogramBackendArray

__all__ = ["TensogramBackendEntrypoint", "WIRE_VERSION_ATTR", "check_message_index", "open_message_dataset",
           "wire_version"]


def message_count(handle: Any) -> int:
    """Number of messages in an open ``TensogramFile``."""
    return len(handle)


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
    plans = plan_message(
        metadata,
        list(info["descriptors"]),
        variable_key=variable_key,
        dim_names=dim_names,
        drop=drop_variables or (),
    )

    coords: dict[str, xr.Variable] = {}
    data_vars: dict[str, xr.Variable] = {}
    for plan in plans:
        array = TensogramBackendArray.for_descriptor(
            path,
            index,
            plan.obj_index,
            plan.descriptor,
            range_threshold=range_threshold,
            verify_hash=verify_hash,
            storage_options=storage_options,
        )
        variable = xr.Variable(plan.dims, indexing.LazilyIndexedArray(array), plan.attrs)
        if plan.coordinate:
            coords[plan.name] = variable
        else:
            variable.encoding.update({"tensogram_message_index": index, "tensogram_object_index": plan.obj_index})
            data_vars[plan.name] = variable
    return xr.Dataset(data_vars, coords=coords, attrs=message_attrs(metadata))


class TensogramBackendEntrypoint(BackendEntrypoint):
    """xarray engine ``tensogram``: read-only access to ``.tgm`` files.

    Registered through the ``xarray.backends`` entry point::

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
