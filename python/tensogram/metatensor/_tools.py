"""Whole-file validation and schema diffs: the verdicts of ``metatensor validate`` and
``metatensor diff``, computed by the same C++ functions."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, List, Optional, Union

from .. import _metatensor
from ._schema import Schema, schema_text

__all__ = ["SchemaChange", "SchemaDiff", "ValidationResult", "diff", "validate"]


@dataclass(frozen=True)
class ValidationResult:
    """The verdict on one file.

    ``valid``; ``format``: "metatensor", "safetensors" (a valid safetensors file without a
    metatensor schema, which the CLI reports with its own exit code) or None when invalid;
    ``level``: what was checked, as the CLI prints it ("structural", "deep", "safetensors",
    "safetensors, deep"); ``code`` and ``message``: the first failure (``code`` is the format's error
    name, e.g. "MT_BLOB_BOUNDS", "ST_OFFSETS"). ``bool(result)`` is ``valid``.
    """

    valid: bool
    format: Optional[str]
    level: str
    code: Optional[str] = None
    message: Optional[str] = None

    def __bool__(self) -> bool:
        return self.valid


def validate(source: Union[str, "os.PathLike[str]", bytes], deep: bool = True, *,
             raise_on_error: bool = False) -> ValidationResult:
    """Validates a file (a path, or a file image as ``bytes``) as ``metatensor validate [--deep]``:
    the safetensors base layer, then for metatensor files the full structural validation (every
    BlobRef included) and, with ``deep``, every value against the schema (UTF-8, BOOL bytes,
    padding, ``minimum``, ``pattern``, ...). A plain safetensors file is valid with format
    "safetensors".

    An invalid file gives ``valid=False`` with the error name in ``code``; with
    ``raise_on_error`` it raises MetatensorError instead. A missing file raises FileNotFoundError,
    other I/O failures OSError. The GIL is released while the file is read and checked.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        arg: Any = bytes(source)
    else:
        arg = os.fspath(source)
    try:
        fmt = _metatensor.validate(arg, bool(deep))
    except _metatensor.MetatensorError as e:
        if raise_on_error or e.code is None:
            raise
        return ValidationResult(False, None, "deep" if deep else "structural", e.code, str(e))
    if fmt == "safetensors":
        return ValidationResult(True, fmt, "safetensors, deep" if deep else "safetensors")
    return ValidationResult(True, fmt, "deep" if deep else "structural")


@dataclass(frozen=True)
class SchemaChange:
    """One line of a diff: a logical tensor or field path (``"particles.vel"``), what changed, and
    the class of that change: "identical layout", "compatible", "view-compatible", "convertible"
    or "incompatible"."""

    path: str
    change: str
    verdict: str


@dataclass(frozen=True)
class SchemaDiff:
    """How files written with one schema read with another: ``verdict`` is the worst class of
    ``changes`` ("identical layout" when nothing changed). ``compatible`` is True unless a change is
    "incompatible" (``breaking``). ``str()`` is the text ``metatensor diff`` prints."""

    verdict: str
    changes: List[SchemaChange] = field(default_factory=list)

    @property
    def compatible(self) -> bool:
        return self.verdict != "incompatible"

    @property
    def breaking(self) -> bool:
        return not self.compatible

    def __str__(self) -> str:
        lines = [f"{c.verdict:<18} {c.path}: {c.change}" for c in self.changes]
        lines.append(f"verdict: {self.verdict}")
        return "\n".join(lines) + "\n"


def _schema_of(source: Union[Schema, str, bytes, "os.PathLike[str]"]) -> str:
    if isinstance(source, dict):
        return schema_text(source)
    if isinstance(source, bytes):
        return source.decode("utf-8")
    if isinstance(source, str) and source.lstrip().startswith("{"):
        return source
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"a schema is a dict, JSON text or a path, got {type(source).__name__}")
    path = os.fspath(source)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No such file or directory: {path!r}")
    embedded = _metatensor.embedded_schema(path)
    if embedded is not None:
        return embedded
    with open(path, encoding="utf-8") as f:  # a schema document
        return f.read()


def diff(old: Union[Schema, str, bytes, "os.PathLike[str]"],
         new: Union[Schema, str, bytes, "os.PathLike[str]"]) -> SchemaDiff:
    """Classifies reading files written with schema ``old`` through schema ``new`` (schema
    evolution), as ``metatensor diff OLD NEW``. Each is a schema dict, JSON text (a ``str``
    starting with ``{``), or a path to a metatensor file (its embedded schema) or to a JSON schema
    document. Raises MetatensorError (``MT_SCHEMA_*``) for a schema that does not compile,
    ValueError for a safetensors file without a schema."""
    verdict, changes = _metatensor.diff(_schema_of(old), _schema_of(new))
    return SchemaDiff(verdict, [SchemaChange(p, c, v) for p, c, v in changes])
