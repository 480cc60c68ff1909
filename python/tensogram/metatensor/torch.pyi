# Type stubs of tensogram.metatensor.torch (python/tensogram/metatensor/torch.py).
from __future__ import annotations

import os
from typing import Any, Dict, Mapping, Optional, Union

import torch

_Path = Union[str, os.PathLike[str]]

def to_torch(name: str, kind: str, dtype: str, value: Any) -> torch.Tensor: ...
def load_file(filename: _Path, device: Union[str, int] = "cpu") -> Dict[str, torch.Tensor]: ...
def load(data: bytes) -> Dict[str, torch.Tensor]: ...
def save(tensors: Mapping[str, torch.Tensor], metadata: Optional[Mapping[str, str]] = None) -> bytes: ...
def save_file(
    tensors: Mapping[str, torch.Tensor], filename: _Path, metadata: Optional[Mapping[str, str]] = None
) -> None: ...
