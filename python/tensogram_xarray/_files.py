"""Opening ``TensogramFile`` handles for the xarray engine.

Backend arrays must be picklable (dask ships them to worker processes), so
they never hold an open file handle.  They keep the source path and look the
handle up here, in a small per-process cache.  The cache only saves re-opening
the file: a cached handle is dropped as soon as the local file's size or
modification time changes, so it can never make a read return different
numbers than a fresh open would ("Backend arrays are picklable").
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any

from tensogram._naming import is_remote, normalize_source, open_source

__all__ = ["clear_file_cache", "get_file", "is_remote", "normalize_source", "open_file"]

# Upper bound on cached handles per process; the least recently used handle
# is dropped first (its file is closed when the object is collected).
_MAX_CACHED_FILES = 32

_cache: "OrderedDict[tuple, Any]" = OrderedDict()
_cache_lock = threading.Lock()


def _options_key(storage_options: dict | None) -> tuple:
    if not storage_options:
        return ()
    return tuple(sorted((str(k), str(v)) for k, v in storage_options.items()))


def _local_stamp(source: str) -> tuple:
    """(size, mtime_ns) of a local file, so a rewritten file is re-opened."""
    try:
        st = os.stat(source)
    except OSError:
        return (None, None)
    return (st.st_size, st.st_mtime_ns)


def open_file(source: str, storage_options: dict | None = None) -> Any:
    """Open *source* with the ``tensogram`` module (no caching).

    Tests replace this function to observe which module calls the engine
    makes.
    """
    return open_source(source, storage_options)


def get_file(source: str, storage_options: dict | None = None) -> Any:
    """Return a (possibly cached) open ``TensogramFile`` for *source*.

    ``TensogramFile`` is safe for concurrent calls, so one
    handle is shared by all threads of the process.
    """
    remote = is_remote(source)
    stamp = () if remote else _local_stamp(source)
    key = (source, _options_key(storage_options), stamp)
    with _cache_lock:
        handle = _cache.get(key)
        if handle is not None:
            _cache.move_to_end(key)
            return handle
    # Open outside the lock: opening a remote file may take a while.
    handle = open_file(source, storage_options)
    with _cache_lock:
        # Drop stale entries for the same source (older size/mtime).
        for old in [k for k in _cache if k[0] == source and k[1] == key[1]]:
            del _cache[old]
        _cache[key] = handle
        while len(_cache) > _MAX_CACHED_FILES:
            _cache.popitem(last=False)
    return handle


def clear_file_cache() -> None:
    """Forget every cached ``TensogramFile`` handle of this process."""
    with _cache_lock:
        _cache.clear()


def cached_sources() -> list[str]:
    """Sources this process holds an open handle for, least recently used first.

    For checking where reads happened, e.g. ``client.run(cached_sources)`` on
    a ``dask.distributed`` cluster lists what each worker process opened.
    """
    with _cache_lock:
        return [key[0] for key in _cache]
