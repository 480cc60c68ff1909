"""User-facing texts cite public documents, never the project's internal
specification numbers ("spec 06 §4.3", "spec 04 Part B"): the metatensor
format is cited by the sections of docs/metatensor-format.md
("metatensor-format §4.3"), Tensogram behaviour by docs/*.md or the
reference's own documentation. Checked here: docs/*.md, README.md, the
--help texts of both command-line tools and the docstrings of the public
Python modules. Code comments may keep citing the internal specification."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
import subprocess
from pathlib import Path

import pytest

import tensogram

ROOT = Path(__file__).resolve().parents[2]
INTERNAL = re.compile(r"\b[Ss]pec(?:s|ification)?\.?\s+0?[1-8]\b|\b[Ss]pec\s*§|shared/spec|\b0[1-8]-[a-z-]+\.md\b")
FORMAT_CITATION = re.compile(r"metatensor-format §(\d+)(?:\.(\d+))?")


def offending(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if INTERNAL.search(line)]


def test_the_pattern_catches_internal_citations():
    caught = ["(spec 06 §4.3)", "spec 04 Part B", "Spec 08 §2: x", "see ../shared/spec/06-metatensor.md",
              "the spec §4.9 vectors", "specs 01 and 02"]
    assert all(INTERNAL.search(t) for t in caught)
    allowed = ["metatensor-format §4.3", "RFC 9000 §14.2.1", "docs/sz3-format.md §7", "inspect 06 rows",
               "the spec of blosc2"]
    assert not any(INTERNAL.search(t) for t in allowed)


@pytest.mark.parametrize("path", sorted([*(ROOT / "docs").glob("*.md"), ROOT / "README.md"]),
                         ids=lambda p: p.name)
def test_documents(path):
    assert offending(path.read_text()) == []


def format_sections() -> set[tuple[int, int | None]]:
    """(section, subsection) of every heading of docs/metatensor-format.md."""
    text = (ROOT / "docs" / "metatensor-format.md").read_text()
    found = set()
    for major, minor in re.findall(r"^#+ §(\d+)(?:\.(\d+))? ", text, flags=re.M):
        found.add((int(major), int(minor) if minor else None))
        found.add((int(major), None))
    return found


def test_format_citations_name_existing_sections():
    sections = format_sections()
    assert (14, 3) in sections and (2, None) in sections
    texts = [p.read_text() for p in [*(ROOT / "docs").glob("*.md"), ROOT / "README.md"]]
    texts += [p.read_text() for p in (ROOT / "src" / "metatensor").rglob("*.cpp")]
    texts += [p.read_text() for p in (ROOT / "tools" / "metatensor").glob("*.cpp")]
    cited = {(int(a), int(b) if b else None) for t in texts for a, b in FORMAT_CITATION.findall(t)}
    assert cited, "nothing cites the format document"
    # §2 rules are numbered paragraphs (§2.1 ... §2.10), not headings.
    missing = {c for c in cited - sections if not (c[0] == 2 and c[1] is not None and 1 <= c[1] <= 10)}
    assert missing == set()


def public_docstrings() -> dict[str, str]:
    """Docstrings of the public modules, their classes, functions, methods and properties."""
    names = ["tensogram", "tensogram.metatensor", "tensogram._metatensor"]
    if importlib.util.find_spec("zarr") is not None:  # tensogram.zarr needs it
        names += ["tensogram.zarr"]
    if importlib.util.find_spec("xarray") is not None:  # tensogram_xarray needs it
        names += ["tensogram_xarray", "tensogram_xarray.backend", "tensogram_xarray.array",
                  "tensogram_xarray.grouping"]
    docs: dict[str, str] = {}

    def add(where: str, obj) -> None:
        doc = getattr(obj, "__doc__", None)
        if isinstance(doc, str):
            docs[where] = doc

    for name in names:
        module = importlib.import_module(name)
        add(name, module)
        for attr, value in vars(module).items():
            if attr.startswith("__"):
                continue
            if inspect.isclass(value) or callable(value):
                add(f"{name}.{attr}", value)
            if inspect.isclass(value):
                for member, inner in vars(value).items():
                    if not member.startswith("__") or member in ("__init__", "__getitem__", "__enter__"):
                        add(f"{name}.{attr}.{member}", inner)
    return docs


def test_python_docstrings():
    docs = public_docstrings()
    assert len(docs) > 50 and "tensogram.metatensor.safe_open" in docs
    assert {where: offending(doc) for where, doc in docs.items() if offending(doc)} == {}


def cli(name: str) -> Path:
    """A built command-line tool: next to the build tree's python/ directory."""
    build = Path(tensogram.__file__).resolve().parents[2]
    path = build / "tools" / name / name
    if not path.exists():
        pytest.skip(f"{path} is not built")
    return path


def run(program: Path, *args: str) -> str:
    # The tools carry their own sanitizer runtime when built with one; the
    # interpreter's preload is not theirs to inherit.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TENSOGRAM_", "METATENSOR_")) and k != "LD_PRELOAD"}
    done = subprocess.run([str(program), *args], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_metatensor_help():
    tool = cli("metatensor")
    top = run(tool, "--help")
    subcommands = re.findall(r"^  ([a-z][a-z-]+)\s", top.split("Subcommands:")[1], flags=re.M)
    assert {"validate", "serve", "fetch", "diff"} <= set(subcommands)
    texts = {"--help": top, **{f"{s} --help": run(tool, s, "--help") for s in subcommands}}
    assert "metatensor-format §8" in texts["validate --help"]
    assert {k: offending(v) for k, v in texts.items() if offending(v)} == {}


def test_tensogram_help():
    tool = cli("tensogram")
    top = run(tool, "--help")
    commands = re.findall(r"^  ([a-z][a-z0-9-]+)\s", top.split("Commands:")[1].split("Options:")[0], flags=re.M)
    assert {"validate", "convert-npy", "doctor"} <= set(commands)
    texts = {"--help": top, **{f"{c} --help": run(tool, c, "--help") for c in commands if c != "help"}}
    assert {k: offending(v) for k, v in texts.items() if offending(v)} == {}
