"""xarray backend engine ``tensogram`` for Tensogram ``.tgm`` files.

Pure Python; consumes only the public ``tensogram`` module API (docs/python.md),
so any compatible implementation of that module works underneath.

* ``xr.open_dataset(path, engine="tensogram", ...)`` — one message, lazily
  (see :class:`TensogramBackendEntrypoint`).
* :func:`open_datasets` — every message, grouped by (shape, dtype) and
  stacked along the metadata keys that vary.

See docs/python.md.
"""

from ._files import clear_file_cache
from .array import StackedBackendArray, TensogramBackendArray, flat_runs, supports_range_decode
from .backend import TensogramBackendEntrypoint
from .grouping import open_datasets

__version__ = "0.24.0"

__all__ = [
    "StackedBackendArray",
    "TensogramBackendArray",
    "TensogramBackendEntrypoint",
    "clear_file_cache",
    "flat_runs",
    "open_datasets",
    "supports_range_decode",
    "__version__",
]
