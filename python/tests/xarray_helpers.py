"""Shared helpers for the xarray engine tests (test_xarray.py)."""

from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np


def desc(shape: Sequence[int], dtype: str = "float32", **extra: Any) -> dict:
    """Descriptor dict (spec 04 B.3) with the given shape/dtype and options."""
    d = {
        "type": "ntensor",
        "shape": list(shape),
        "dtype": dtype,
        "encoding": "none",
        "filter": "none",
        "compression": "none",
    }
    d.update(extra)
    return d


def write_tgm(path, messages) -> str:
    """Write *messages* — a list of ``(meta_dict, [(desc, ndarray), ...])`` —
    to *path* with ``TensogramFile.create`` / ``append``; return the path."""
    import tensogram

    f = tensogram.TensogramFile.create(str(path))
    for meta, pairs in messages:
        f.append(meta, [(d, np.ascontiguousarray(a)) for d, a in pairs])
    del f
    return str(path)


class CountingFile:
    """Proxy for a ``TensogramFile`` that records every method call.

    ``calls`` holds ``(method_name, args, kwargs)`` tuples in call order.
    """

    def __init__(self, real: Any, calls: list):
        self._real = real
        self._calls = calls
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            self._calls.append(("__len__", (), {}))
        return len(self._real)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._real, name)
        if not callable(attr):
            return attr

        def wrapper(*args, **kwargs):
            with self._lock:
                self._calls.append((name, args, kwargs))
            return attr(*args, **kwargs)

        return wrapper


def names(calls: list) -> list[str]:
    """Method names of recorded calls."""
    return [c[0] for c in calls]


def payload_calls(calls: list) -> list:
    """Recorded calls that decode object payloads."""
    payload = {
        "file_decode_object",
        "file_decode_range",
        "decode_message",
        "read_message",
        "messages",
        "file_decode_object_batch",
        "file_decode_range_batch",
        "__getitem__",
    }
    return [c for c in calls if c[0] in payload]
