# Type stubs of the `tensogram` module (spec 04 Part B), describing what the
# package really exports: the extension built from python/src/*.cpp and the
# pure-Python tensogram/_async.py.
#
# python/tests/test_stubs.py keeps this file honest: every public name of the
# built module has a stub here and every stub exists there, and parameter
# names, keyword-only markers, defaults and async-ness equal the real
# signatures (pybind11's, or inspect.signature for the Python parts).
#
# Names starting with "_" are stub-only helpers (aliases, TypedDicts of the
# dicts the module returns); they do not exist at run time.

import asyncio
import mmap
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import (
    Any,
    Literal,
    NamedTuple,
    NotRequired,
    SupportsIndex,
    TypeAlias,
    TypedDict,
    Unpack,
    overload,
)

import numpy as np
import numpy.typing as npt

# ---- aliases ------------------------------------------------------------------

# Any C-contiguous object with the buffer protocol is read in place (B.5);
# numpy arrays are read through their data pointer.
_ReadableBuffer: TypeAlias = bytes | bytearray | memoryview | mmap.mmap | npt.NDArray[Any]
# Payload of one object to encode (B.4): a C-contiguous numpy array of the
# descriptor's dtype (or uint8 raw bytes), or any bytes-like object.
_Payload: TypeAlias = npt.NDArray[Any] | bytes | bytearray | memoryview
# Already-encoded payloads (encode_pre_encoded, write_object_pre_encoded):
# bytes-like only, numpy arrays are refused (B.4).
_PreEncodedPayload: TypeAlias = bytes | bytearray | memoryview
# The metadata dict (B.2) and descriptor dict (B.3) must be real dicts.
_MetaDict: TypeAlias = dict[str, Any]
_DescriptorDict: TypeAlias = dict[str, Any]
# The pairs must be a list of 2-tuples (B.4). Their data slot is typed Any:
# list is invariant, so a precise union there would reject a list built as
# [(descriptor, ndarray), ...]; _Payload above says what is accepted.
_Pairs: TypeAlias = list[tuple[_DescriptorDict, Any]]
_PreEncodedPairs: TypeAlias = list[tuple[_DescriptorDict, Any]]
# [(start, count), ...] element ranges over the flattened object.
_Ranges: TypeAlias = Sequence[tuple[int, int]] | Sequence[Sequence[int]]
_StrPath: TypeAlias = str | os.PathLike[str]

_HashAlgo: TypeAlias = Literal["xxh3", "none"] | None
_MaskMethod: TypeAlias = Literal["none", "rle", "roaring", "lz4", "zstd", "blosc2"] | None
_AggregateHash: TypeAlias = Literal["auto", "none", "header", "footer", "both"] | None
_ValidationLevel: TypeAlias = Literal["quick", "default", "checksum", "full"]
_Array: TypeAlias = npt.NDArray[Any]

# ---- dicts returned by the module ---------------------------------------------

class _ValidationIssue(TypedDict):
    code: str
    level: Literal["structure", "metadata", "integrity", "fidelity"]
    severity: Literal["error", "warning"]
    description: str
    object_index: NotRequired[int]
    byte_offset: NotRequired[int]

class _ValidationReport(TypedDict):
    issues: list[_ValidationIssue]
    object_count: int
    hash_verified: bool

class _FileIssue(TypedDict):
    byte_offset: int
    length: int
    description: str

class _FileValidationReport(TypedDict):
    file_issues: list[_FileIssue]
    messages: list[_ValidationReport]

class _PackingParams(TypedDict):
    sp_reference_value: float
    sp_binary_scale_factor: int
    sp_decimal_scale_factor: int
    sp_bits_per_value: int

class _FileDescriptors(TypedDict):
    metadata: Metadata
    descriptors: list[DataObjectDescriptor]

class _FileObject(TypedDict):
    metadata: Metadata
    descriptor: DataObjectDescriptor
    data: _Array

# http(s) sources only in this build (file.cpp, spec 08 §3): values are taken
# as str(value); the reference's object-store client keys (durations such as
# "30s") and this build's request headers, millisecond timeouts and TLS
# verification; an unknown key fails the open (OSError).
class _StorageOptions(TypedDict, total=False):
    headers: Mapping[str, str]
    timeout_ms: int
    connect_timeout_ms: int
    verify_tls: bool | str
    timeout: str
    connect_timeout: str
    allow_http: bool | str
    allow_invalid_certificates: bool | str
    user_agent: str

# Keyword arguments the AsyncTensogramFile methods pass on to TensogramFile.
class _ObjectReadOptions(TypedDict, total=False):
    native_byte_order: bool
    threads: int
    verify_hash: bool

class _RangeReadOptions(TypedDict, total=False):
    join: bool
    native_byte_order: bool
    threads: int

# ---- constants ----------------------------------------------------------------

WIRE_VERSION: int
__version__: str
__has_grib__: bool
__has_netcdf__: bool
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

# ---- exceptions (B.7) -----------------------------------------------------------

class IntegrityError(Exception):
    """Hash verification failed (base of MissingHashError and HashMismatchError)."""

class MissingHashError(IntegrityError):
    """verify_hash=True but the object was written without a hash."""

    object_index: int

class HashMismatchError(IntegrityError):
    """A stored xxh3 hash disagrees with the data (expected/actual: 16 hex digits)."""

    object_index: int | None
    expected: str
    actual: str

# ---- metadata and descriptors (B.6) ---------------------------------------------

class Metadata(Mapping[str, Any]):
    """Read-only metadata of one message.

    Registered at run time as a virtual subclass of collections.abc.Mapping;
    keys(), values() and items() return lists.
    """

    @property
    def version(self) -> int: ...
    @property
    def num_objects(self) -> int: ...
    @property
    def base(self) -> list[dict[str, Any]]: ...
    @property
    def extra(self) -> dict[str, Any]: ...
    @property
    def reserved(self) -> dict[str, Any]: ...
    def __getitem__(self, key: str, /) -> Any: ...
    def __contains__(self, key: object, /) -> bool: ...
    def get(self, key: str, default: Any = None) -> Any: ...  # type: ignore[override]
    def keys(self) -> list[str]: ...  # type: ignore[override]
    def values(self) -> list[Any]: ...  # type: ignore[override]
    def items(self) -> list[tuple[str, Any]]: ...  # type: ignore[override]
    def __iter__(self) -> Iterator[str]: ...
    def __len__(self) -> int: ...
    def has_path(self, path: str) -> bool: ...
    def get_path(self, path: str, default: Any = None) -> Any: ...
    def has_path_at(self, obj: int, path: str) -> bool: ...
    def get_path_at(self, obj: int, path: str, default: Any = None) -> Any: ...
    def __repr__(self) -> str: ...

class DataObjectDescriptor:
    """Read-only descriptor of one data object."""

    @property
    def obj_type(self) -> str: ...
    @property
    def ndim(self) -> int: ...
    @property
    def shape(self) -> list[int]: ...
    @property
    def strides(self) -> list[int]: ...
    @property
    def dtype(self) -> str: ...
    @property
    def byte_order(self) -> Literal["little", "big"]: ...
    @property
    def encoding(self) -> str: ...
    @property
    def filter(self) -> str: ...
    @property
    def compression(self) -> str: ...
    @property
    def params(self) -> dict[str, Any]: ...
    @property
    def hash(self) -> None: ...
    def __repr__(self) -> str: ...

class Message(NamedTuple):
    """A decoded message: metadata and a list of (descriptor, array) pairs."""

    metadata: Metadata
    objects: list[tuple[DataObjectDescriptor, _Array]]

_MaskKind: TypeAlias = Literal["nan", "inf+", "inf-"]

# What decode_with_masks returns: at run time a Message, whose objects are
# (descriptor, stored payload, masks) triples; masks maps each recorded kind
# to one bool per element.
class _MaskedMessage(NamedTuple):
    metadata: Metadata
    objects: list[tuple[DataObjectDescriptor, _Array, dict[_MaskKind, npt.NDArray[np.bool_]]]]

# ---- iterators ----------------------------------------------------------------

class MessageIter:
    """Iterator of Message over the messages of a buffer (owns a copy of it)."""

    def __iter__(self) -> MessageIter: ...
    def __next__(self) -> Message: ...
    def __len__(self) -> int: ...
    def __repr__(self) -> str: ...

class TensogramFileIter:
    """Iterator of Message over a local file (with its own file handle)."""

    def __iter__(self) -> TensogramFileIter: ...
    def __next__(self) -> Message: ...
    def __len__(self) -> int: ...
    def __repr__(self) -> str: ...

# ---- module-level functions (B.5) -------------------------------------------------

def encode(
    global_meta_dict: _MetaDict,
    descriptors_and_data: _Pairs,
    hash: _HashAlgo = "xxh3",
    threads: int = 0,
    allow_nan: bool = False,
    allow_inf: bool = False,
    nan_mask_method: _MaskMethod = None,
    pos_inf_mask_method: _MaskMethod = None,
    neg_inf_mask_method: _MaskMethod = None,
    small_mask_threshold_bytes: int | None = None,
    aggregate_hash: _AggregateHash = None,
) -> bytes: ...
def encode_pre_encoded(
    global_meta_dict: _MetaDict,
    descriptors_and_data: _PreEncodedPairs,
    hash: _HashAlgo = "xxh3",
    threads: int = 0,
) -> bytes: ...
def decode(
    buf: _ReadableBuffer,
    native_byte_order: bool = True,
    threads: int = 0,
    restore_non_finite: bool = True,
    verify_hash: bool = False,
) -> Message: ...
def decode_with_masks(buf: _ReadableBuffer, native_byte_order: bool = True, threads: int = 0) -> _MaskedMessage: ...
def decode_metadata(buf: _ReadableBuffer) -> Metadata: ...
def decode_descriptors(buf: _ReadableBuffer) -> tuple[Metadata, list[DataObjectDescriptor]]: ...
def decode_object(
    buf: _ReadableBuffer,
    index: int,
    native_byte_order: bool = True,
    threads: int = 0,
    restore_non_finite: bool = True,
    verify_hash: bool = False,
) -> tuple[Metadata, DataObjectDescriptor, _Array]: ...
@overload
def decode_range(
    buf: _ReadableBuffer,
    object_index: int,
    ranges: _Ranges,
    join: Literal[False] = False,
    native_byte_order: bool = True,
    threads: int = 0,
    restore_non_finite: bool = True,
) -> list[_Array]: ...
@overload
def decode_range(
    buf: _ReadableBuffer,
    object_index: int,
    ranges: _Ranges,
    join: Literal[True],
    native_byte_order: bool = True,
    threads: int = 0,
    restore_non_finite: bool = True,
) -> _Array: ...
@overload
def decode_range(
    buf: _ReadableBuffer,
    object_index: int,
    ranges: _Ranges,
    join: bool = False,
    native_byte_order: bool = True,
    threads: int = 0,
    restore_non_finite: bool = True,
) -> list[_Array] | _Array: ...
def scan(buf: _ReadableBuffer) -> list[tuple[int, int]]: ...
def iter_messages(buf: _ReadableBuffer, *, verify_hash: bool = False) -> MessageIter: ...
def validate(
    buf: _ReadableBuffer, level: _ValidationLevel = "default", check_canonical: bool = False
) -> _ValidationReport: ...
def validate_file(
    path: _StrPath, level: _ValidationLevel = "default", check_canonical: bool = False
) -> _FileValidationReport: ...
def compute_hash(data: bytes | bytearray, algo: str = "xxh3") -> str: ...
def compute_packing_params(
    values: npt.ArrayLike, bits_per_value: int, decimal_scale_factor: int = 0
) -> _PackingParams: ...
def simple_packing_compute_params(
    values: npt.ArrayLike, bits_per_value: int, decimal_scale_factor: int = 0
) -> _PackingParams: ...
def doctor() -> dict[str, Any]: ...
def is_remote_url(source: str) -> bool: ...

# Converters (B.5, spec 05). In a build without the importers
# (__has_grib__ / __has_netcdf__ False) each raises RuntimeError.
def convert_grib(
    path: _StrPath,
    *,
    grouping: Literal["merge_all", "one_to_one"] = "merge_all",
    preserve_all_keys: bool = False,
    encoding: str = "none",
    bits: int | None = None,
    filter: str = "none",
    compression: str = "none",
    compression_level: int | None = None,
    threads: int = 0,
    hash: str | None = "xxh3",
) -> list[bytes]: ...
def convert_grib_buffer(
    buffer: _ReadableBuffer,
    *,
    grouping: Literal["merge_all", "one_to_one"] = "merge_all",
    preserve_all_keys: bool = False,
    encoding: str = "none",
    bits: int | None = None,
    filter: str = "none",
    compression: str = "none",
    compression_level: int | None = None,
    threads: int = 0,
    hash: str | None = "xxh3",
) -> list[bytes]: ...
def convert_netcdf(
    path: _StrPath,
    *,
    split_by: Literal["file", "variable", "record"] = "file",
    cf: bool = False,
    nested_groups: bool = True,
    encoding: str = "none",
    bits: int | None = None,
    filter: str = "none",
    compression: str = "none",
    compression_level: int | None = None,
    threads: int = 0,
    hash: str | None = "xxh3",
) -> list[bytes]: ...
def to_grib(messages: _ReadableBuffer | Sequence[_ReadableBuffer]) -> bytes: ...
def to_netcdf(messages: _ReadableBuffer | Sequence[_ReadableBuffer], path: _StrPath) -> None: ...

# ---- files (B.6) ----------------------------------------------------------------

class TensogramFile:
    """A file of concatenated messages, local or remote (http/https)."""

    @staticmethod
    def open(source: _StrPath, *, bidirectional: bool = True) -> TensogramFile: ...
    @staticmethod
    def open_remote(
        source: str, storage_options: _StorageOptions | dict[str, Any] | None = None, *, bidirectional: bool = True
    ) -> TensogramFile: ...
    @staticmethod
    def create(path: _StrPath) -> TensogramFile: ...
    def message_count(self) -> int: ...
    def __len__(self) -> int: ...
    def append(
        self,
        global_meta_dict: _MetaDict,
        descriptors_and_data: _Pairs,
        hash: _HashAlgo = "xxh3",
        threads: int = 0,
        allow_nan: bool = False,
        allow_inf: bool = False,
        nan_mask_method: _MaskMethod = None,
        pos_inf_mask_method: _MaskMethod = None,
        neg_inf_mask_method: _MaskMethod = None,
        small_mask_threshold_bytes: int | None = None,
        aggregate_hash: _AggregateHash = None,
    ) -> None: ...
    def decode_message(
        self,
        index: int,
        native_byte_order: bool = True,
        threads: int = 0,
        restore_non_finite: bool = True,
        verify_hash: bool = False,
    ) -> Message: ...
    def file_decode_metadata(self, msg_index: int) -> Metadata: ...
    def file_decode_descriptors(self, msg_index: int) -> _FileDescriptors: ...
    def file_decode_object(
        self,
        msg_index: int,
        obj_index: int,
        native_byte_order: bool = True,
        threads: int = 0,
        verify_hash: bool = False,
    ) -> _FileObject: ...
    @overload
    def file_decode_range(
        self,
        msg_index: int,
        obj_index: int,
        ranges: _Ranges,
        join: Literal[False] = False,
        native_byte_order: bool = True,
        threads: int = 0,
    ) -> list[_Array]: ...
    @overload
    def file_decode_range(
        self,
        msg_index: int,
        obj_index: int,
        ranges: _Ranges,
        join: Literal[True],
        native_byte_order: bool = True,
        threads: int = 0,
    ) -> _Array: ...
    @overload
    def file_decode_range(
        self,
        msg_index: int,
        obj_index: int,
        ranges: _Ranges,
        join: bool = False,
        native_byte_order: bool = True,
        threads: int = 0,
    ) -> list[_Array] | _Array: ...
    def file_decode_object_batch(
        self,
        msg_indices: Iterable[int],
        obj_index: int,
        native_byte_order: bool = True,
        threads: int = 0,
        verify_hash: bool = False,
    ) -> list[_FileObject]: ...
    @overload
    def file_decode_range_batch(
        self,
        msg_indices: Iterable[int],
        obj_index: int,
        ranges: _Ranges,
        join: Literal[False] = False,
        native_byte_order: bool = True,
        threads: int = 0,
    ) -> list[list[_Array]]: ...
    @overload
    def file_decode_range_batch(
        self,
        msg_indices: Iterable[int],
        obj_index: int,
        ranges: _Ranges,
        join: Literal[True],
        native_byte_order: bool = True,
        threads: int = 0,
    ) -> list[_Array]: ...
    @overload
    def file_decode_range_batch(
        self,
        msg_indices: Iterable[int],
        obj_index: int,
        ranges: _Ranges,
        join: bool = False,
        native_byte_order: bool = True,
        threads: int = 0,
    ) -> list[list[_Array]] | list[_Array]: ...
    def read_message(self, index: int) -> bytes: ...
    def messages(self) -> list[bytes]: ...
    def is_remote(self) -> bool: ...
    def source(self) -> str: ...
    @overload
    def __getitem__(self, key: SupportsIndex) -> Message: ...
    @overload
    def __getitem__(self, key: slice) -> list[Message]: ...
    def __iter__(self) -> TensogramFileIter: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    def __enter__(self) -> TensogramFile: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> Literal[False]: ...
    def __repr__(self) -> str: ...

# ---- streaming (B.6) ------------------------------------------------------------

class StreamingEncoder:
    """Builds one message in memory, object by object."""

    def __init__(
        self,
        global_meta_dict: _MetaDict,
        hash: _HashAlgo = "xxh3",
        threads: int = 0,
        allow_nan: bool = False,
        allow_inf: bool = False,
        nan_mask_method: _MaskMethod = None,
        pos_inf_mask_method: _MaskMethod = None,
        neg_inf_mask_method: _MaskMethod = None,
        small_mask_threshold_bytes: int | None = None,
        aggregate_hash: _AggregateHash = None,
    ) -> None: ...
    def write_object(self, descriptor_dict: _DescriptorDict, data: _Payload) -> None: ...
    def write_object_pre_encoded(self, descriptor_dict: _DescriptorDict, data: _PreEncodedPayload) -> None: ...
    @property
    def object_count(self) -> int: ...
    def finish(self) -> bytes: ...
    def finish_backfilled(self) -> bytes: ...
    def finish_and_reset(self) -> bytes: ...
    def finish_and_reset_backfilled(self) -> bytes: ...

# ---- asyncio (B.6) --------------------------------------------------------------

class AsyncTensogramFile:
    """A TensogramFile for asyncio code: each call runs in a worker thread.

    Create it with ``await AsyncTensogramFile.open(...)``. ``len(f)`` and
    ``async for`` need ``await f.message_count()`` first (else RuntimeError).
    """

    def __init__(self, sync_file: TensogramFile) -> None: ...
    @classmethod
    def open(cls, source: _StrPath, *, bidirectional: bool = True) -> asyncio.Future[AsyncTensogramFile]: ...
    @classmethod
    def open_remote(
        cls, source: str, storage_options: _StorageOptions | dict[str, Any] | None = None, *, bidirectional: bool = True
    ) -> asyncio.Future[AsyncTensogramFile]: ...
    async def message_count(self) -> int: ...
    async def decode_message(
        self, index: int, native_byte_order: bool = True, threads: int = 0, verify_hash: bool = False
    ) -> Message: ...
    async def file_decode_metadata(self, msg_index: int) -> Metadata: ...
    async def file_decode_descriptors(self, msg_index: int) -> _FileDescriptors: ...
    async def file_decode_object(
        self, msg_index: int, obj_index: int, **kwargs: Unpack[_ObjectReadOptions]
    ) -> _FileObject: ...
    async def file_decode_range(
        self, msg_index: int, obj_index: int, ranges: _Ranges, **kwargs: Unpack[_RangeReadOptions]
    ) -> list[_Array] | _Array: ...
    async def file_decode_object_batch(
        self, msg_indices: Iterable[int], obj_index: int, **kwargs: Unpack[_ObjectReadOptions]
    ) -> list[_FileObject]: ...
    async def file_decode_range_batch(
        self, msg_indices: Iterable[int], obj_index: int, ranges: _Ranges, **kwargs: Unpack[_RangeReadOptions]
    ) -> list[list[_Array] | _Array]: ...
    async def read_message(self, index: int) -> bytes: ...
    async def messages(self) -> list[bytes]: ...
    async def prefetch_layouts(self, msg_indices: Iterable[int]) -> None: ...
    def is_remote(self) -> bool: ...
    def source(self) -> str: ...
    def __len__(self) -> int: ...
    def __aiter__(self) -> AsyncTensogramFileIter: ...
    async def __aenter__(self) -> AsyncTensogramFile: ...
    async def __aexit__(self, *exc: Any) -> Literal[False]: ...
    def __repr__(self) -> str: ...

class AsyncTensogramFileIter:
    """``async for meta, objects in f``: decodes the messages in order."""

    def __init__(self, f: AsyncTensogramFile, count: int) -> None: ...
    def __aiter__(self) -> AsyncTensogramFileIter: ...
    def __anext__(self) -> asyncio.Future[Message]: ...
    def __len__(self) -> int: ...
    def __repr__(self) -> str: ...
