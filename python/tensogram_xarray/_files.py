"""Opening ``TensogramFile`` handles for the xarray engine.

Backend arrays must be picklable (dask ships them to worker processes), so
they never hold an open file handle.  They keep the source path and look the
handle up here, in a small per-process cache.  The cache only saves re-opening
the file: a cached handle is dropped as soon as the local file's size or
modification time changes, so it can never make a read return different
numbers than a fresh open would (spec 04 E.1: "Backend arrays are picklable").
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any

# Upper bound on cached handles per process; the least recently used handle
# is dropped first (its file is closed when the object is collected).
_MAX_CACHED_FILES = 32

_cache: "OrderedDict[tuple, Any]" = OrderedDict()
_cache_lock = threading.Lock()


def is_remote(source: str) -> bool:
    """Return True when *source* is a remote URL the module opens remotely.

    Delegates to ``tensogram.is_remote_url`` (spec 04 B.5), the single source
    of truth for which schemes are remote.
    """
    import tensogram

    return bool(tensogram.is_remote_url(source))


def normalize_source(source: Any) -> str:
    """Turn a path-like *source* into the string stored in backend arrays.

    Local paths are made absolute so that a pickled array still finds the
    file from a worker whose current directory differs.
    """
    text = os.fspath(source)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if is_remote(text):
        return text
    return os.path.abspath(text)


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

    Remote URLs go through ``TensogramFile.open_remote`` so that
    ``storage_options`` reach the object store; local paths use
    ``TensogramFile.open`` (spec 04 B.6, E.3).  Tests replace this function
    to observe which module calls the engine makes.
    """
    import tensogram

    if is_remote(source):
        options = {str(k): str(v) for k, v in (storage_options or {}).items()}
        return tensogram.TensogramFile.open_remote(source, options)
    return tensogram.TensogramFile.open(source)


def get_file(source: str, storage_options: dict | None = None) -> Any:
    """Return a (possibly cached) open ``TensogramFile`` for *source*.

    ``TensogramFile`` is safe for concurrent calls (spec 04 B.1), so one
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
