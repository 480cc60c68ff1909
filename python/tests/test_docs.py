"""Every ```python block of docs/python.md runs, in order, in one namespace.

The user guide is executable documentation: each block builds on the names
the earlier ones defined (the first creates ``workdir``, a temporary
directory for every file the examples write) and asserts what it claims.
A failing block is reported with its number, its first line in the page and
its text, and stops the run (later blocks depend on it).

Blocks that import xarray/dask are skipped only if those packages cannot be
imported (they can wherever ``make deps`` ran).
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import traceback
from pathlib import Path

import pytest

DOC_PATH = Path(__file__).resolve().parent.parent.parent / "docs" / "python.md"

# A fenced block: an opening ```python line, then everything up to the next
# line that is exactly ``` (fences inside other block kinds do not occur).
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)

OPTIONAL_IMPORTS = ("xarray", "dask", "tensogram_xarray")


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line number of the opening fence, code) of every python block."""
    return [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in FENCE.finditer(text)]


def missing_optional_imports(code: str) -> list[str]:
    needed = set(re.findall(r"^\s*(?:import|from)\s+(\w+)", code, re.MULTILINE))
    return [name for name in OPTIONAL_IMPORTS if name in needed and importlib.util.find_spec(name) is None]


def test_python_md_has_blocks():
    blocks = python_blocks(DOC_PATH.read_text(encoding="utf-8"))
    assert len(blocks) >= 10, f"only {len(blocks)} python blocks found in {DOC_PATH}"
    # The first block sets up the directory the others write into.
    assert "workdir" in blocks[0][1] and "mkdtemp" in blocks[0][1]


def test_python_md_examples_run():
    blocks = python_blocks(DOC_PATH.read_text(encoding="utf-8"))
    namespace: dict = {"__name__": "docs_python_md"}
    skipped = []
    try:
        for number, (line, code) in enumerate(blocks, start=1):
            missing = missing_optional_imports(code)
            if missing:
                skipped.append((number, missing))
                continue
            try:
                exec(compile(code, f"{DOC_PATH.name}:block{number}(line {line})", "exec"), namespace)
            except BaseException as e:  # noqa: BLE001 - report any failure with its block
                if isinstance(e, (KeyboardInterrupt, SystemExit)):
                    raise
                pytest.fail(
                    f"docs/python.md block {number} (line {line}) raised {type(e).__name__}: {e}\n"
                    f"--- block {number} ---\n{code}--- traceback ---\n{traceback.format_exc()}",
                    pytrace=False,
                )
    finally:
        workdir = namespace.get("workdir")
        if isinstance(workdir, str) and Path(workdir).is_dir():
            shutil.rmtree(workdir, ignore_errors=True)
    if skipped:
        pytest.skip(f"blocks needing missing packages were skipped: {skipped}")


def test_block_runner_reports_failures(tmp_path):
    """The extraction and exec path above does fail on a wrong example."""
    page = "text\n\n```python\nx = 1\n```\n\nmore\n\n```python\nassert x == 2, 'x is 1'\n```\n"
    blocks = python_blocks(page)
    assert [line for line, _ in blocks] == [3, 9]
    namespace: dict = {}
    exec(compile(blocks[0][1], "block1", "exec"), namespace)
    with pytest.raises(AssertionError, match="x is 1"):
        exec(compile(blocks[1][1], "block2", "exec"), namespace)
    # sh and plain blocks are not collected
    assert python_blocks("```sh\nls\n```\n```\nplain\n```\n") == []
