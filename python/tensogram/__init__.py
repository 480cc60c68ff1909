"""Tensogram N-tensor messages (wire format v3) for Python, on the tensogram-cpp library.

The API follows the reference implementation's module (see docs/python.md):

    import numpy as np
    import tensogram

    data = np.linspace(250.0, 310.0, 1000).reshape(20, 50)
    msg = tensogram.encode(
        {"base": [{"name": "t2m"}]},
        [({"type": "ntensor", "shape": [20, 50], "dtype": "float64", "compression": "zstd"}, data)],
    )
    meta, objects = tensogram.decode(msg)
    descriptor, array = objects[0]

See docs/python.md for the full tour.
"""

from collections.abc import Mapping as _Mapping

from ._tensogram import (  # noqa: F401  (re-exported API)
    WIRE_VERSION,
    DataObjectDescriptor,
    HashMismatchError,
    IntegrityError,
    Message,
    MessageIter,
    Metadata,
    MissingHashError,
    StreamingEncoder,
    TensogramFile,
    TensogramFileIter,
    __has_grib__,
    __has_netcdf__,
    __version__,
    compute_hash,
    compute_packing_params,
    convert_grib,
    convert_grib_buffer,
    convert_netcdf,
    decode,
    decode_descriptors,
    decode_metadata,
    decode_object,
    decode_range,
    decode_with_masks,
    doctor,
    encode,
    encode_pre_encoded,
    is_remote_url,
    iter_messages,
    scan,
    simple_packing_compute_params,
    to_grib,
    to_netcdf,
    validate,
    validate_file,
)

from . import _arguments  # noqa: E402

# The reference's argument-error texts (missing/extra/unknown arguments, an
# argument of the wrong kind) instead of pybind11's generic one; successful
# calls go straight to the extension.
for _name in ("compute_hash", "compute_packing_params", "convert_grib", "convert_grib_buffer", "convert_netcdf",
              "decode", "decode_descriptors", "decode_metadata", "decode_object", "decode_range",
              "decode_with_masks", "doctor", "encode", "encode_pre_encoded", "is_remote_url", "iter_messages",
              "scan", "simple_packing_compute_params", "to_grib", "to_netcdf", "validate", "validate_file"):
    globals()[_name] = _arguments.wrap(globals()[_name], _name)
_arguments.wrap_class(TensogramFile, [n for n in vars(TensogramFile) if not n.startswith("_")
                                      and callable(getattr(TensogramFile, n))])
_arguments.wrap_class(StreamingEncoder, [n for n in vars(StreamingEncoder) if not n.startswith("_")
                                         and callable(getattr(StreamingEncoder, n))])
del _name

from ._async import AsyncTensogramFile, AsyncTensogramFileIter  # noqa: E402

# Metadata implements the Mapping protocol over its merged top-level keys
# (spec 04 B.1: a virtual subclass of collections.abc.Mapping).
_Mapping.register(Metadata)

__all__ = [
    "AsyncTensogramFile",
    "AsyncTensogramFileIter",
    "WIRE_VERSION",
    "DataObjectDescriptor",
    "HashMismatchError",
    "IntegrityError",
    "Message",
    "MessageIter",
    "Metadata",
    "MissingHashError",
    "StreamingEncoder",
    "TensogramFile",
    "TensogramFileIter",
    "compute_hash",
    "compute_packing_params",
    "convert_grib",
    "convert_grib_buffer",
    "convert_netcdf",
    "decode",
    "decode_descriptors",
    "decode_metadata",
    "decode_object",
    "decode_range",
    "decode_with_masks",
    "doctor",
    "encode",
    "encode_pre_encoded",
    "is_remote_url",
    "iter_messages",
    "scan",
    "simple_packing_compute_params",
    "to_grib",
    "to_netcdf",
    "validate",
    "validate_file",
]
