"""Where ``safe_open`` gets its file from, and in which framework it answers.

* a path, ``framework="np"``: a read-only map; arrays are read-only views.
* a path, ``framework="pt"``: a private copy-on-write map; tensors share its
  pages and may be written (the write stays in this process, the file never
  changes). PyTorch has no read-only tensors, and an in-place operation on a
  tensor over a read-only map would crash the process.
* a URL (``http://``, ``https://``, ``metatensor://``): the library's
  streaming client; the header is fetched at open, each tensor (and its
  heap) when it is first read.

Each source is wrapped in an object with the methods of ``_metatensor.File``
so that ``safe_open`` does not care which one it holds.
"""

from __future__ import annotations

import os
import re
from typing import Any, Callable, Optional

from .. import _metatensor
from .._metatensor import MetatensorError

NUMPY_FRAMEWORKS = ("np", "numpy")
TORCH_FRAMEWORKS = ("pt", "torch", "pytorch")
# Names safetensors accepts that this module does not serve.
OTHER_FRAMEWORKS = ("tf", "tensorflow", "jax", "flax", "mlx")
# Device names safetensors accepts (with ":<index>" for most) besides "cpu".
ACCELERATORS = ("cuda", "mps", "npu", "xpu", "xla", "mlu", "hpu")

# Any "scheme://": the library names the schemes it serves when it rejects one.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def check_framework(framework: str, device: Any) -> str:
    """"np" or "pt" for a framework name safetensors accepts; SafetensorError (MetatensorError)
    as safetensors raises it for any other name, for another framework, or a device not "cpu"."""
    if framework in NUMPY_FRAMEWORKS:
        kind = "np"
    elif framework in TORCH_FRAMEWORKS:
        try:
            import torch  # noqa: F401
        except ImportError:
            raise ImportError(
                f"framework={framework!r} needs PyTorch, which is not installed; use framework='np'"
            ) from None
        kind = "pt"
    elif framework in OTHER_FRAMEWORKS:
        raise MetatensorError(f"framework {framework} is not supported by tensogram.metatensor; use 'np' or 'pt'")
    else:
        raise MetatensorError(f"framework {framework} is invalid")
    if device == "cpu":
        return kind
    known = isinstance(device, int) or (
        isinstance(device, str) and any(device == a or device.startswith(a + ":") for a in ACCELERATORS)
    )
    if not known:
        raise MetatensorError(f"device {device} is invalid")
    raise MetatensorError(f"device {device} is not supported: tensogram.metatensor reads tensors into cpu memory")


def is_url(filename: Any) -> bool:
    return isinstance(filename, str) and _URL.match(filename) is not None


class RemoteSource:
    """A remote file: ``tensor(name)`` fetches the tensor (one range request or stream, plus one
    for its heap) the first time, then views it like a local file."""

    def __init__(self, url: str, writable: bool) -> None:
        self.remote = _metatensor.RemoteFile.open(url, writable)
        self._file = _metatensor.File(self.remote.opened)

    def __getattr__(self, attr: str) -> Any:  # keys, metadata, schema, info, closed, ...
        return getattr(self._file, attr)

    def tensor(self, name: str) -> Any:
        self._file.info(name)  # "the file is closed" / unknown names before any request
        self.remote.fetch(name)
        return self._file.tensor(name)

    def blob_field(self, name: str, field: str) -> Any:
        self._file.info(name)
        self.remote.fetch(name)
        return self._file.blob_field(name, field)

    def close(self) -> None:
        self._file.close()
        self.remote.close()


class ConvertedSource:
    """A source whose tensors pass through ``convert(name, kind, dtype, value)`` (PyTorch)."""

    def __init__(self, file: Any, convert: Callable[[str, str, str, Any], Any]) -> None:
        self._file = file
        self._convert = convert

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._file, attr)

    def tensor(self, name: str) -> Any:
        kind, dtype, _ = self._file.info(name)
        return self._convert(name, kind, dtype, self._file.tensor(name))

    def blob_field(self, name: str, field: str) -> Any:
        kind, dtype, _ = self._file.info(name)
        return self._convert(name, "blob", dtype, self._file.blob_field(name, field))

    def close(self) -> None:
        self._file.close()


def open_file(filename: Any, framework: str, device: Any = "cpu") -> Any:
    """The object behind ``safe_open``: a ``_metatensor.File`` or a wrapper with its methods."""
    kind = check_framework(framework, device)
    writable = kind == "pt"
    source: Any
    if is_url(filename):
        source = RemoteSource(filename, writable)
    elif writable:
        path = os.fspath(filename)
        os.stat(path)  # FileNotFoundError / PermissionError as open() raises them
        source = _metatensor.File(_metatensor.open_copy_on_write(path))
    else:
        source = _metatensor.File.open(os.fspath(filename))
    if not writable:
        return source
    from .torch import to_torch

    return ConvertedSource(source, to_torch)


def open_bytes(data: bytes, framework: Optional[str] = None) -> Any:
    """A file image in memory: read-only views for numpy, a writable copy for PyTorch."""
    if framework == "pt":
        return _metatensor.File(_metatensor.open_bytes_writable(bytes(data)))
    return _metatensor.File.from_bytes(bytes(data))
