"""The reference's argument-error texts for calls into the extension.

pybind11 answers a call whose arguments do not fit with one generic
``TypeError: f(): incompatible function arguments. The following argument
types are supported: ...``. The reference (a PyO3 module) gives CPython's own
texts instead, which scripts and tests match on (docs/python.md, "Errors"):

* ``decode() missing 1 required positional argument: 'buf'``
* ``decode() takes from 1 to 5 positional arguments but 6 were given``
* ``decode() got an unexpected keyword argument 'bogus'``
* ``argument 'index': 'str' object cannot be interpreted as an integer``

``wrap`` puts a thin Python function around an extension callable. The
successful call goes straight through; only when pybind11 refuses the
arguments is a stub with the same parameters (parsed from the pybind11
signature line of ``__doc__``) called with them, so CPython itself words the
count and keyword errors, and the one argument of the wrong kind is named.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
from typing import Any, Callable, Optional

_INCOMPATIBLE = "incompatible function arguments"


def _split_top_level(text: str) -> list[str]:
    """Splits ``a: int = 0, b: Dict[str, int] = {}`` at top-level commas."""
    parts, depth, start = [], 0, 0
    quote = ""
    for i, c in enumerate(text):
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


class _Param:
    __slots__ = ("name", "annotation", "default", "keyword_only")

    def __init__(self, name: str, annotation: str, default: Any, keyword_only: bool) -> None:
        self.name, self.annotation, self.default, self.keyword_only = name, annotation, default, keyword_only


def _parse(doc: Optional[str], name: str) -> Optional[list[_Param]]:
    """The parameters of the pybind11 signature line ``name(...) -> ...``."""
    first = (doc or "").lstrip("\n").split("\n", 1)[0].strip()
    if not first.startswith(name + "(") or ") -> " not in first:
        return None
    inner = first[len(name) + 1:first.rindex(") -> ")]
    params: list[_Param] = []
    keyword_only = False
    for part in _split_top_level(inner):
        if part == "*":
            keyword_only = True
            continue
        if part.startswith("*"):
            return None  # *args / **kwargs: pybind11 accepts anything, nothing to word
        head, _, default_text = part.partition(" = ")
        pname, _, annotation = head.partition(": ")
        default: Any = inspect.Parameter.empty
        if default_text:
            try:
                default = ast.literal_eval(default_text)
            except (ValueError, SyntaxError):
                return None
        params.append(_Param(pname.strip(), annotation.strip(), default, keyword_only))
    return params


def _signature(params: list[_Param]) -> inspect.Signature:
    kinds = inspect.Parameter
    return inspect.Signature([
        inspect.Parameter(p.name, kinds.KEYWORD_ONLY if p.keyword_only else kinds.POSITIONAL_OR_KEYWORD,
                          default=p.default)
        for p in params
    ])


def _stub(qualname: str, params: list[_Param]) -> Callable[..., None]:
    """A function with these parameters whose code object carries
    ``qualname``, so CPython's binding errors read ``TensogramFile.open()``."""
    sig_text = []
    keyword_only_started = False
    for i, p in enumerate(params):
        if p.keyword_only and not keyword_only_started:
            sig_text.append("*")
            keyword_only_started = True
        sig_text.append(p.name if p.default is inspect.Parameter.empty else f"{p.name}=_d[{i}]")
    namespace: dict[str, Any] = {"_d": [p.default for p in params]}
    exec(f"def _f({', '.join(sig_text)}):\n    pass\n", namespace)  # noqa: S102 - names come from our own signatures
    f = namespace["_f"]
    f.__code__ = f.__code__.replace(co_name=qualname.rsplit(".", 1)[-1], co_qualname=qualname)
    f.__qualname__ = qualname
    return f


def _kind_error(params: list[_Param], stub: Callable[..., None], args: tuple, kwargs: dict) -> Optional[TypeError]:
    """CPython's count/keyword TypeError, or the conversion error of the first
    argument whose kind does not fit its annotation; None when neither."""
    try:
        stub(*args, **kwargs)
    except TypeError as e:
        return e
    bound = inspect.signature(stub).bind(*args, **kwargs)
    by_name = {p.name: p for p in params}
    for name, value in bound.arguments.items():
        annotation = by_name[name].annotation
        qn = type(value).__qualname__
        shown = "'None' is not" if value is None else f"'{qn}' object is not"
        if annotation == "int" and not hasattr(type(value), "__index__"):
            return TypeError(f"argument '{name}': '{qn}' object cannot be interpreted as an integer")
        if annotation in ("str", "bool", "dict", "list") and not isinstance(value, getattr(builtins, annotation)):
            return TypeError(f"argument '{name}': {shown} an instance of '{annotation}'")
    return None


def wrap(fn: Callable[..., Any], qualname: str, *, method: bool = False) -> Callable[..., Any]:
    """``fn`` with the reference's argument errors; ``fn`` itself when its
    signature cannot be read. ``method``: the first argument is ``self``
    (not counted in the texts, as in the reference)."""
    params = _parse(fn.__doc__, qualname.rsplit(".", 1)[-1])
    if params is None:
        return fn
    if method:
        if not params or params[0].name != "self":
            return fn
        params = params[1:]
    stub = _stub(qualname, params)

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except TypeError as e:
            if _INCOMPATIBLE not in str(e):
                raise
            better = _kind_error(params, stub, args[1:] if method else args, kwargs)
            if better is None:
                raise
        raise better from None

    del call.__wrapped__  # inspect.signature must see the parameters below, not the builtin
    signature = _signature(params)
    if method:
        self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        signature = signature.replace(parameters=[self_param, *signature.parameters.values()])
    call.__signature__ = signature  # type: ignore[attr-defined]
    return call


def wrap_class(cls: type, names: list[str]) -> None:
    """Wraps the listed methods of an extension class in place (static
    methods stay static)."""
    for name in names:
        raw = cls.__dict__[name]
        if isinstance(raw, staticmethod):
            setattr(cls, name, staticmethod(wrap(raw.__func__, f"{cls.__name__}.{name}")))
        else:
            setattr(cls, name, wrap(getattr(cls, name), f"{cls.__name__}.{name}", method=True))
