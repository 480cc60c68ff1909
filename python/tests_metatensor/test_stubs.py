"""The type stubs python/tensogram/metatensor/__init__.pyi against the
module: every public name has a stub and every stub a real name; functions
and methods have the real parameter names, kinds and defaults; every
annotation resolves. The checks return problems so that the last test can
feed a broken stub and see them reported."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from tensogram import metatensor as mt

STUB = Path(__file__).resolve().parent.parent / "tensogram" / "metatensor" / "__init__.pyi"


def stub_params(node: ast.FunctionDef) -> list[tuple[str, str, object]]:
    """(name, kind, default) of a stub function's parameters."""
    a = node.args
    out = []
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + [ast.literal_eval(d) for d in a.defaults]
    for p, d in zip(positional, defaults):
        out.append((p.arg, "POSITIONAL_OR_KEYWORD", d))
    if a.vararg:
        out.append((a.vararg.arg, "VAR_POSITIONAL", None))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((p.arg, "KEYWORD_ONLY", None if d is None else ast.literal_eval(d)))
    if a.kwarg:
        out.append((a.kwarg.arg, "VAR_KEYWORD", None))
    return out


def real_params(fn) -> list[tuple[str, str, object]]:
    out = []
    for p in inspect.signature(fn).parameters.values():
        kind = "POSITIONAL_OR_KEYWORD" if p.kind == p.POSITIONAL_ONLY else p.kind.name
        out.append((p.name, kind, None if p.default is p.empty else p.default))
    return out


def problems(stub_text: str) -> list[str]:
    tree = ast.parse(stub_text)
    found = []
    stubbed = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            stubbed[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                stubbed[target.id] = node
    for name in mt.__all__:
        if name not in stubbed:
            found.append(f"{name}: no stub")
    for name, node in stubbed.items():
        if name.startswith("_") and name != "_Slice":
            continue
        real = getattr(mt, name, None) if name != "_Slice" else mt._Slice
        if real is None:
            found.append(f"{name}: stubbed but not in the module")
            continue
        if isinstance(node, ast.FunctionDef) and stub_params(node) != real_params(real):
            found.append(f"{name}: stub {stub_params(node)} != real {real_params(real)}")
        if isinstance(node, ast.ClassDef):
            for member in node.body:
                if not isinstance(member, ast.FunctionDef):
                    continue
                attr = getattr(real, member.name, None)
                if attr is None:
                    found.append(f"{name}.{member.name}: not in the class")
                elif inspect.isfunction(attr) and stub_params(member) != real_params(attr):
                    found.append(f"{name}.{member.name}: stub {stub_params(member)} != real {real_params(attr)}")
    # Every annotation resolves.
    namespace: dict = {}
    exec(compile(stub_text.replace("from __future__ import annotations\n", ""), str(STUB), "exec"), namespace)
    return found


def test_stubs_match_the_module():
    assert problems(STUB.read_text()) == []


def test_broken_stubs_are_reported():
    text = STUB.read_text()
    assert any("load_file" in p for p in problems(text.replace("def load_file(filename: _Path)",
                                                                "def load_file(path: _Path)")))
    assert any("save" in p for p in problems(text.replace("def save(", "def save_all(")))
    assert any("get_slice" in p for p in problems(text.replace("def get_slice(self, name: str)",
                                                                "def get_slice(self, name: str, x: int = 1)")))
