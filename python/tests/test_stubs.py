"""The type stubs python/tensogram/__init__.pyi against the built module.

The stub file is parsed with ``ast`` and compared with what the package
really exports (spec 04 Part B):

* every public name of the module (``__all__`` and every other attribute not
  starting with "_", plus ``__version__``/``__has_grib__``/``__has_netcdf__``)
  has a stub, and every stubbed name exists in the module;
* every stubbed function and method has the parameter names, kinds
  (positional-only, keyword-only, ``*args``/``**kwargs``) and defaults of the
  real one: for the extension, the pybind11 signature on the first line of
  its ``__doc__``; for the pure-Python parts (``AsyncTensogramFile``),
  ``inspect.signature``; ``async def`` in the stub exactly where the real
  method is a coroutine function;
* classes have the same members, properties stay properties, exceptions and
  ``Message`` have the bases and fields of the real ones;
* every annotation in the stub resolves (the file is executed with postponed
  annotations and ``typing.get_type_hints`` evaluates each one).

The comparison functions return a list of problems instead of asserting, so
the last tests can feed them a deliberately broken stub and check that the
problem is reported: the checks can fail.
"""

from __future__ import annotations

import ast
import builtins
import collections.abc
import inspect
import re
import sys
import types
import typing
from pathlib import Path

import numpy as np
import pytest

import tensogram

STUB_PATH = Path(__file__).resolve().parent.parent / "tensogram" / "__init__.pyi"

# Attributes every module has; they are not part of the API.
MODULE_BOILERPLATE = {
    "__all__",
    "__builtins__",
    "__cached__",
    "__doc__",
    "__file__",
    "__loader__",
    "__name__",
    "__package__",
    "__path__",
    "__spec__",
}
# Class attributes that are not API members (pybind11 and Python plumbing).
CLASS_BOILERPLATE = {"__module__", "__doc__", "__dict__", "__weakref__", "__init__", "__qualname__",
                     "__annotations__", "__slots__", "__orig_bases__", "__parameters__"}

FunctionNode = (ast.FunctionDef, ast.AsyncFunctionDef)

MISSING = object()  # "no default" marker

# Parameter kinds, as in inspect.Parameter.
POSITIONAL_ONLY = "positional-only"
POSITIONAL_OR_KEYWORD = "positional-or-keyword"
VAR_POSITIONAL = "*args"
KEYWORD_ONLY = "keyword-only"
VAR_KEYWORD = "**kwargs"


# ---- reading the stub ------------------------------------------------------------


def load_stub(source: str | None = None) -> ast.Module:
    if source is None:
        source = STUB_PATH.read_text(encoding="utf-8")
    return ast.parse(source, filename=str(STUB_PATH))


def decorator_names(node: ast.FunctionDef) -> set[str]:
    names = set()
    for d in node.decorator_list:
        if isinstance(d, ast.Name):
            names.add(d.id)
        elif isinstance(d, ast.Attribute):
            names.add(d.attr)
    return names


def literal_default(node: ast.expr) -> object:
    """The value of a default in the stub; stubs here give real defaults."""
    return ast.literal_eval(node)


def stub_params(node: ast.FunctionDef) -> list[tuple[str, str, object]]:
    """(name, kind, default) of each parameter of a stubbed function."""
    a = node.args
    positional = [(p, POSITIONAL_ONLY) for p in a.posonlyargs] + [(p, POSITIONAL_OR_KEYWORD) for p in a.args]
    # defaults belong to the last len(a.defaults) positional parameters
    first_default = len(positional) - len(a.defaults)
    out: list[tuple[str, str, object]] = []
    for i, (p, kind) in enumerate(positional):
        default = literal_default(a.defaults[i - first_default]) if i >= first_default else MISSING
        out.append((p.arg, kind, default))
    if a.vararg is not None:
        out.append((a.vararg.arg, VAR_POSITIONAL, MISSING))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((p.arg, KEYWORD_ONLY, MISSING if d is None else literal_default(d)))
    if a.kwarg is not None:
        out.append((a.kwarg.arg, VAR_KEYWORD, MISSING))
    return out


class StubInfo:
    """Top-level names of the stub file, split by what they are."""

    def __init__(self, tree: ast.Module):
        self.functions: dict[str, list[ast.FunctionDef]] = {}  # several entries = overloads
        self.classes: dict[str, ast.ClassDef] = {}
        self.variables: dict[str, ast.AST] = {}  # constants and __all__
        for node in tree.body:
            if isinstance(node, FunctionNode):
                self.functions.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                self.variables[node.target.id] = node
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.variables[t.id] = node

    def public_names(self) -> set[str]:
        """Stubbed names meant to exist at run time (stub-only helpers start with "_")."""
        names = set(self.functions) | set(self.classes) | set(self.variables)
        return {n for n in names if not n.startswith("_") or (n.startswith("__") and n != "__all__")}


# ---- reading the built module ----------------------------------------------------------


def split_top_level(text: str) -> list[str]:
    """Split a parameter list at commas outside brackets and quotes."""
    parts, depth, quote, current = [], 0, None, []
    for ch in text:
        if quote:
            current.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return parts


SIGNATURE_LINE = re.compile(r"^(?P<name>\w+)\((?P<params>.*)\)(?:\s*->\s*(?P<ret>.+))?$")


def python_params(func: object) -> list[tuple[str, str, object]]:
    """(name, kind, default) of a pure-Python function."""
    kinds = {
        inspect.Parameter.POSITIONAL_ONLY: POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD: POSITIONAL_OR_KEYWORD,
        inspect.Parameter.VAR_POSITIONAL: VAR_POSITIONAL,
        inspect.Parameter.KEYWORD_ONLY: KEYWORD_ONLY,
        inspect.Parameter.VAR_KEYWORD: VAR_KEYWORD,
    }
    return [
        (p.name, kinds[p.kind], MISSING if p.default is inspect.Parameter.empty else p.default)
        for p in inspect.signature(func).parameters.values()
    ]


def runtime_params(obj: object, expected_name: str) -> list[tuple[str, str, object]]:
    """(name, kind, default): the pybind11 signature on the first line of
    __doc__, or the signature of a pure-Python function."""
    if inspect.isfunction(obj):
        assert obj.__name__ == expected_name, f"{obj.__name__} found for {expected_name}"
        return python_params(obj)
    doc = getattr(obj, "__doc__", None) or ""
    first = doc.lstrip("\n").split("\n", 1)[0].strip()
    match = SIGNATURE_LINE.match(first)
    assert match, f"{expected_name}: no pybind11 signature line in __doc__: {first!r}"
    assert match.group("name") == expected_name, f"signature line names {match.group('name')!r}: {first!r}"
    kind = POSITIONAL_OR_KEYWORD
    out: list[tuple[str, str, object]] = []
    for part in split_top_level(match.group("params")):
        if part == "*":
            kind = KEYWORD_ONLY
            continue
        if part == "/":
            out = [(n, POSITIONAL_ONLY, d) for n, _k, d in out]
            continue
        if part.startswith("**"):
            out.append((part[2:].split(":")[0].strip(), VAR_KEYWORD, MISSING))
            continue
        if part.startswith("*"):
            out.append((part[1:].split(":")[0].strip(), VAR_POSITIONAL, MISSING))
            kind = KEYWORD_ONLY
            continue
        name_and_type, _eq, default_text = part.partition(" = ")
        name = name_and_type.split(":", 1)[0].strip()
        default: object = MISSING
        if _eq:
            try:
                default = ast.literal_eval(default_text.strip())
            except (ValueError, SyntaxError):
                default = ("<unparsed>", default_text.strip())
        out.append((name, kind, default))
    return out


def is_submodule(name: str) -> bool:
    """True for a submodule of the package (``tensogram.zarr`` once imported):
    those are typed inline (py.typed), not by this stub."""
    value = getattr(tensogram, name, None)
    return isinstance(value, types.ModuleType) and value.__name__ == f"tensogram.{name}"


def runtime_public_names() -> set[str]:
    names = {n for n in dir(tensogram) if not n.startswith("_") and not is_submodule(n)}
    names |= {n for n in dir(tensogram) if n.startswith("__") and n.endswith("__") and n not in MODULE_BOILERPLATE}
    return names | set(tensogram.__all__)


# ---- comparisons (each returns a list of problems) ---------------------------------------------


def compare_params(where: str, stub: list[tuple[str, str, object]], real: list[tuple[str, str, object]],
                   overloaded: bool) -> list[str]:
    problems = []
    if len(stub) != len(real):
        return [f"{where}: stub has parameters {[p[0] for p in stub]}, module has {[p[0] for p in real]}"]
    for (s_name, s_kind, s_default), (r_name, r_kind, r_default) in zip(stub, real):
        if re.fullmatch(r"arg\d+", r_name) and r_kind == POSITIONAL_OR_KEYWORD:
            # pybind11 names unnamed arguments argN and accepts them by
            # position only: the stub must mark them positional-only ("/").
            if s_kind != POSITIONAL_ONLY:
                problems.append(f"{where}: parameter {s_name!r} is unnamed ({r_name}) in the module; "
                                "the stub must make it positional-only")
            continue
        if s_name != r_name:
            problems.append(f"{where}: stub parameter {s_name!r} is {r_name!r} in the module")
            continue
        if s_kind != r_kind and not (s_name == "self" and {s_kind, r_kind} <= {POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD}):
            # (a "/" later in the stub makes self positional-only as well)
            problems.append(f"{where}: parameter {s_name!r} is {s_kind} in the stub, {r_kind} in the module")
        if s_default is MISSING and r_default is not MISSING:
            # Allowed only in an overload that narrows the parameter (e.g.
            # join: Literal[True]), where a default could not be given.
            if not overloaded:
                problems.append(f"{where}: parameter {s_name!r} has default {r_default!r} in the module, "
                                "none in the stub")
        elif s_default is not MISSING and r_default is MISSING:
            problems.append(f"{where}: parameter {s_name!r} has default {s_default!r} in the stub, "
                            "none in the module")
        elif s_default is not MISSING and (type(s_default) is not type(r_default) or s_default != r_default):
            problems.append(f"{where}: parameter {s_name!r} defaults to {s_default!r} in the stub, "
                            f"{r_default!r} in the module")
    return problems


def compare_function(where: str, stub_defs: list[ast.FunctionDef], real: object, real_name: str,
                     drop_self: bool = False) -> list[str]:
    problems = []
    real_params = runtime_params(real, real_name)
    overloaded = len(stub_defs) > 1
    is_coroutine = inspect.iscoroutinefunction(real)
    for d in stub_defs:
        if isinstance(d, ast.AsyncFunctionDef) != is_coroutine:
            problems.append(f"{where}: {'async def' if is_coroutine else 'def'} in the module, "
                            f"{'async def' if isinstance(d, ast.AsyncFunctionDef) else 'def'} in the stub")
    if overloaded:
        for d in stub_defs:
            if "overload" not in decorator_names(d):
                problems.append(f"{where}: defined {len(stub_defs)} times but not every definition is @overload")
    for i, d in enumerate(stub_defs):
        params = stub_params(d)
        problems += compare_params(f"{where}" + (f" (overload {i + 1})" if overloaded else ""), params,
                                   real_params, overloaded)
    if overloaded:
        # The last overload is the general one: it carries every default.
        last = stub_params(stub_defs[-1])
        for (name, _k, default), (_n, _rk, r_default) in zip(last, real_params):
            if default is MISSING and r_default is not MISSING:
                problems.append(f"{where}: the last overload must give {name!r} its default {r_default!r}")
    return problems


def annotation_text(node: ast.expr | None) -> str:
    return "" if node is None else ast.unparse(node)


def compare_class(name: str, node: ast.ClassDef) -> list[str]:
    real = getattr(tensogram, name)
    problems = []
    bases = [ast.unparse(b) for b in node.bases]

    if bases == ["NamedTuple"]:
        # Message: a collections.namedtuple with the same fields (B.1).
        fields = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
        if not (isinstance(real, type) and issubclass(real, tuple)):
            problems.append(f"{name}: stubbed as a NamedTuple but is not a tuple subclass")
        elif list(getattr(real, "_fields", ())) != fields:
            problems.append(f"{name}: stub fields {fields}, module fields {list(getattr(real, '_fields', ()))}")
        return problems

    for base in bases:
        base_name = base.split("[", 1)[0]
        if base_name == "Mapping":
            expected = collections.abc.Mapping
        elif hasattr(tensogram, base_name):
            expected = getattr(tensogram, base_name)
        else:
            expected = getattr(builtins, base_name, None)
        if expected is None:
            problems.append(f"{name}: unknown stub base {base}")
        elif not issubclass(real, expected):
            problems.append(f"{name}: stub base {base} but {real} is not a subclass of {expected}")
    if issubclass(real, BaseException):
        # The hierarchy of B.7 exactly: direct bases, not just ancestors
        # (HashMismatchError derives from IntegrityError, not RuntimeError).
        real_bases = [b.__name__ for b in real.__bases__]
        if real_bases != bases:
            problems.append(f"{name}: stub bases {bases}, module bases {real_bases}")
        # Exception attributes are instance attributes set when raising;
        # test_exception_attributes checks them on real exceptions.
        return problems

    stub_members: dict[str, list[ast.FunctionDef]] = {}
    for stmt in node.body:
        if isinstance(stmt, FunctionNode):
            stub_members.setdefault(stmt.name, []).append(stmt)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            problems.append(f"{name}.{stmt.target.id}: plain attribute in the stub; the module has "
                            "properties and methods only")

    # Private helpers of pure-Python classes (_call, ...) are not API.
    real_members = {k for k in vars(real)
                    if k not in CLASS_BOILERPLATE and not (k.startswith("_") and not k.startswith("__"))}
    # A constructor defined by the binding (py::init) is API; pybind11's
    # default __init__ (raising "No constructor defined") is not.
    init = vars(real).get("__init__")
    init_doc = (getattr(init, "__doc__", None) or "") if init is not None else ""
    if init is not None and "No constructor" not in init_doc and "Initialize self" not in init_doc:
        real_members.add("__init__")

    for missing in sorted(real_members - set(stub_members)):
        problems.append(f"{name}.{missing}: exists in the module but has no stub")
    for extra in sorted(set(stub_members) - real_members):
        problems.append(f"{name}.{extra}: stubbed but missing from the module")

    for member, defs in stub_members.items():
        if member not in real_members:
            continue
        raw = vars(real)[member]
        decorators = decorator_names(defs[0])
        where = f"{name}.{member}"
        if isinstance(raw, property):
            if "property" not in decorators:
                problems.append(f"{where}: a property in the module, not in the stub")
            continue
        if "property" in decorators:
            problems.append(f"{where}: a property in the stub but a {type(raw).__name__} in the module")
            continue
        for kind in (staticmethod, classmethod):
            if isinstance(raw, kind) and kind.__name__ not in decorators:
                problems.append(f"{where}: a {kind.__name__} in the module, not in the stub")
            if not isinstance(raw, kind) and kind.__name__ in decorators:
                problems.append(f"{where}: a {kind.__name__} in the stub only")
        func = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
        problems += compare_function(where, defs, func, member)
    return problems


def check_stub(tree: ast.Module) -> list[str]:
    """Every difference between a parsed stub and the built module."""
    info = StubInfo(tree)
    problems = []
    stubbed = info.public_names()
    for name in sorted(runtime_public_names() - stubbed):
        problems.append(f"{name}: exported by the module but has no stub")
    for name in sorted(stubbed - runtime_public_names()):
        problems.append(f"{name}: stubbed but not exported by the module")
    for name, defs in info.functions.items():
        if name.startswith("_") or not hasattr(tensogram, name):
            continue
        problems += compare_function(name, defs, getattr(tensogram, name), name)
    for name, node in info.classes.items():
        if name.startswith("_") or not hasattr(tensogram, name):
            continue
        problems += compare_class(name, node)
    # __all__ of the stub lists exactly the module's.
    all_node = info.variables.get("__all__")
    if all_node is None:
        problems.append("__all__: not in the stub")
    else:
        stub_all = ast.literal_eval(all_node.value)
        if sorted(stub_all) != sorted(tensogram.__all__):
            problems.append(f"__all__: stub {sorted(stub_all)} != module {sorted(tensogram.__all__)}")
    # Constants: annotated with the type of their run-time value.
    for name, node in info.variables.items():
        if name.startswith("_") and not name.startswith("__") or name == "__all__":
            continue
        if isinstance(node, ast.AnnAssign) and hasattr(tensogram, name):
            expected = {"int": int, "str": str, "bool": bool, "float": float}.get(annotation_text(node.annotation))
            value = getattr(tensogram, name)
            if expected is None:
                problems.append(f"{name}: unexpected annotation {annotation_text(node.annotation)}")
            elif type(value) is not expected:
                problems.append(f"{name}: annotated {expected.__name__}, module value {value!r}")
    return problems


# ---- tests ---------------------------------------------------------------------


def test_stub_file_and_marker_exist():
    assert STUB_PATH.is_file()
    assert (STUB_PATH.parent / "py.typed").is_file(), "PEP 561 marker py.typed is missing"


def test_every_public_name_is_stubbed_and_exists():
    info = StubInfo(load_stub())
    stubbed = info.public_names()
    assert set(tensogram.__all__) <= stubbed, sorted(set(tensogram.__all__) - stubbed)
    assert runtime_public_names() - stubbed == set()
    assert stubbed - runtime_public_names() == set()


def test_stub_matches_module():
    problems = check_stub(load_stub())
    assert problems == [], "\n".join(problems)


def test_every_stubbed_callable_was_compared():
    # Guards against a comparison silently skipping names: every public
    # function of the stub has a signature line in the module.
    info = StubInfo(load_stub())
    for name in info.functions:
        if not name.startswith("_"):
            assert runtime_params(getattr(tensogram, name), name) is not None


def test_annotations_resolve():
    """Execute the stub with postponed annotations and evaluate every one."""
    source = "from __future__ import annotations\n" + STUB_PATH.read_text(encoding="utf-8")
    module = types.ModuleType("tensogram_stub_check")
    exec(compile(source, str(STUB_PATH), "exec"), module.__dict__)
    ns = module.__dict__
    checked = 0
    for name, value in list(ns.items()):
        if isinstance(value, types.FunctionType):
            for variant in typing.get_overloads(value) or [value]:
                typing.get_type_hints(variant, globalns=ns)
                checked += 1
        elif isinstance(value, type) and value.__module__ == module.__name__:
            typing.get_type_hints(value, globalns=ns)
            for member in vars(value).values():
                func = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
                if isinstance(func, types.FunctionType):
                    for variant in typing.get_overloads(func) or [func]:
                        typing.get_type_hints(variant, globalns=ns)
                        checked += 1
    assert checked > 50  # every function and method of the stub


def test_exception_attributes():
    """The attributes the stub declares are set on the exceptions raised."""
    info = StubInfo(load_stub())
    desc = {"type": "ntensor", "shape": [4], "dtype": "float64"}
    values = np.arange(4.0)

    unhashed = tensogram.encode({}, [(desc, values)], hash=None)
    with pytest.raises(tensogram.MissingHashError) as missing:
        tensogram.decode(unhashed, verify_hash=True)

    damaged = bytearray(tensogram.encode({}, [(desc, values)]))
    at = bytes(damaged).find(values.tobytes())
    assert at > 0
    damaged[at] ^= 0x01
    with pytest.raises(tensogram.HashMismatchError) as mismatch:
        tensogram.decode(bytes(damaged), verify_hash=True)

    for cls_name, exc in [("MissingHashError", missing.value), ("HashMismatchError", mismatch.value)]:
        declared = [s.target.id for s in info.classes[cls_name].body
                    if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
        assert declared, f"{cls_name}: the stub declares no attributes"
        for attr in declared:
            assert hasattr(exc, attr), f"{cls_name}.{attr} is declared in the stub but not set"
    assert isinstance(mismatch.value.expected, str) and isinstance(mismatch.value.actual, str)
    assert mismatch.value.object_index == 0 and missing.value.object_index == 0


# The checker itself must be able to fail: broken copies of the stub are
# reported.


def _stub_with(old: str, new: str) -> ast.Module:
    source = STUB_PATH.read_text(encoding="utf-8")
    assert old in source, f"test setup: {old!r} not in the stub"
    return load_stub(source.replace(old, new, 1))


def test_checker_reports_renamed_parameter():
    problems = check_stub(_stub_with("def decode_metadata(buf:", "def decode_metadata(buffer:"))
    assert any("decode_metadata" in p and "'buffer'" in p for p in problems), problems


def test_checker_reports_renamed_function():
    problems = check_stub(_stub_with("def scan(", "def scan_messages("))
    assert any(p.startswith("scan:") and "no stub" in p for p in problems), problems
    assert any(p.startswith("scan_messages:") and "not exported" in p for p in problems), problems


def test_checker_reports_wrong_default_and_lost_keyword_only_marker():
    problems = check_stub(_stub_with("def iter_messages(buf: _ReadableBuffer, *, verify_hash: bool = False)",
                                     "def iter_messages(buf: _ReadableBuffer, verify_hash: bool = True)"))
    assert any("iter_messages" in p and "keyword-only" in p for p in problems), problems
    assert any("iter_messages" in p and "defaults to True" in p for p in problems), problems


def test_checker_reports_missing_method_and_property_kind():
    problems = check_stub(_stub_with("    def finish_backfilled(self) -> bytes: ...\n", ""))
    assert any("StreamingEncoder.finish_backfilled" in p for p in problems), problems
    problems = check_stub(_stub_with("    @property\n    def object_count(self)", "    def object_count(self)"))
    assert any("StreamingEncoder.object_count" in p and "property" in p for p in problems), problems


def test_signature_parser_reads_kinds_and_defaults():
    params = runtime_params(tensogram.TensogramFile.__dict__["open_remote"].__func__, "open_remote")
    assert params == [
        ("source", POSITIONAL_OR_KEYWORD, MISSING),
        ("storage_options", POSITIONAL_OR_KEYWORD, None),
        ("bidirectional", KEYWORD_ONLY, True),
    ]
    assert split_top_level("a: Dict[str, int] = {'x': 1}, b: str = 'p,q'") == [
        "a: Dict[str, int] = {'x': 1}",
        "b: str = 'p,q'",
    ]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
