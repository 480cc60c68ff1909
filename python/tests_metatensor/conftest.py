"""Shared helpers for the tensogram.metatensor tests.

`write_safetensors` / `read_safetensors` are an independent, minimal
implementation of the safetensors format written from its description
(numpy, json and struct only, nothing from this project): an 8-byte
little-endian header length N, N bytes of JSON mapping each tensor name to
{"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the
data section that follows the header) plus an optional "__metadata__"
string-to-string map, then the tensors' bytes. They check interoperability
both ways.
"""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

# safetensors dtype names and numpy's, for the dtypes both have.
ST_TO_NUMPY = {
    "BOOL": "?", "U8": "u1", "I8": "i1", "U16": "<u2", "I16": "<i2", "U32": "<u4", "I32": "<i4",
    "U64": "<u8", "I64": "<i8", "F16": "<f2", "F32": "<f4", "F64": "<f8", "C64": "<c8",
}
NUMPY_TO_ST = {np.dtype(v): k for k, v in ST_TO_NUMPY.items()}


def write_safetensors(tensors: dict, metadata: dict | None = None, *, pad_header_to: int = 1) -> bytes:
    """A safetensors file image, tensors in the dict's order with no alignment at all (a U8
    tensor of odd length first leaves the others at odd addresses)."""
    header: dict = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    data = bytearray()
    for name, array in tensors.items():
        array = np.asarray(array, order="C")
        begin = len(data)
        data += array.astype(array.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": NUMPY_TO_ST[array.dtype.newbyteorder("=")], "shape": list(array.shape),
                        "data_offsets": [begin, len(data)]}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((-(8 + len(text))) % pad_header_to)
    return struct.pack("<Q", len(text)) + text + bytes(data)


def read_safetensors(image: bytes) -> tuple[dict, dict | None]:
    """(tensors, metadata) of a safetensors file image, every tensor copied out."""
    (n,) = struct.unpack_from("<Q", image, 0)
    header = json.loads(image[8:8 + n])
    metadata = header.pop("__metadata__", None)
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        raw = image[8 + n + begin:8 + n + end]
        tensors[name] = np.frombuffer(raw, dtype=ST_TO_NUMPY[entry["dtype"]]).reshape(entry["shape"]).copy()
    return tensors, metadata


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261127)
