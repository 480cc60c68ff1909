"""The annotated examples of docs/metatensor-format.md §14 are this writer's
current output: each example's file is written again from the schema and
logical value shown in the document, and its hex dump, its header numbers and
its table of physical tensors must match what the document prints.

When the writer changes on purpose, print the new sections with
`PYTHONPATH=build/python python3 python/tests_metatensor/test_format_doc.py`
and paste them over the old ones."""

from __future__ import annotations

import json
import re
import struct
import sys
from pathlib import Path

import pytest

from tensogram import _metatensor

DOC = Path(__file__).resolve().parents[2] / "docs" / "metatensor-format.md"
EXAMPLE = re.compile(r"<!-- example (\w+) -->\n(.*?)<!-- end example -->", re.S)
FENCE = re.compile(r"```(\w+)\n(.*?)```", re.S)
NUMBERS = re.compile(r"`N = (\d+)`, `D = (\d+)`, header padding: (\d+) spaces")
ROW = re.compile(r"^\| `([^`]+)` \| (\w+) \| \[([\d, ]*)\] \| \[(\d+), (\d+)\] \| (\d+) \|$", re.M)


def xxd(image: bytes) -> str:
    """`xxd`'s default dump: offset, 16 bytes in 8 groups of 2, then the bytes as ASCII."""
    lines = []
    for at in range(0, len(image), 16):
        chunk = image[at:at + 16]
        pairs = [chunk[i:i + 2].hex() for i in range(0, len(chunk), 2)]
        text = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in chunk)
        lines.append(f"{at:08x}: {' '.join(pairs):<39}  {text}")
    return "\n".join(lines) + "\n"


def header_of(image: bytes) -> tuple[int, dict, int]:
    """(N, the header JSON, the number of spaces padding it)."""
    (n,) = struct.unpack_from("<Q", image, 0)
    text = image[8:8 + n].decode()
    return n, json.loads(text), len(text) - len(text.rstrip(" "))


def write(schema: str, value: str) -> bytes:
    return _metatensor.serialize_json(schema, value, {})


def examples() -> dict[str, str]:
    return dict(EXAMPLE.findall(DOC.read_text()))


def parts(body: str) -> tuple[str, str, str]:
    """Schema (json), logical value (json) and hex dump (text) of one example."""
    fences = FENCE.findall(body)
    assert [lang for lang, _ in fences] == ["json", "json", "text"], "an example has a schema, a value and a dump"
    return fences[0][1], fences[1][1], fences[2][1]


def tensor_rows(image: bytes) -> list[tuple[str, str, list[int], int, int, int]]:
    """(name, dtype, shape, begin, end, file offset) of every physical tensor, in offset order."""
    n, header, _ = header_of(image)
    rows = [(name, e["dtype"], e["shape"], *e["data_offsets"], 8 + n + e["data_offsets"][0])
            for name, e in header.items() if name != "__metadata__"]
    return sorted(rows, key=lambda r: (r[3], r[4]))


def section(name: str, schema: str, value: str) -> str:
    """The generated part of an example, as the document prints it."""
    image = write(schema, value)
    n, _, spaces = header_of(image)
    table = ["| physical tensor | dtype | shape | data_offsets | file offset |", "|---|---|---|---|---|"]
    table += [f"| `{t}` | {d} | [{', '.join(map(str, s))}] | [{b}, {e}] | {o} |" for t, d, s, b, e, o in tensor_rows(image)]
    return (f"<!-- example {name} -->\n```json\n{schema}```\n\n```json\n{value}```\n\n```text\n{xxd(image)}```\n\n"
            f"{len(image)} bytes. `N = {n}`, `D = {8 + n}`, header padding: {spaces} spaces.\n\n"
            + "\n".join(table) + "\n\n<!-- end example -->")


def test_the_document_has_the_three_examples():
    assert sorted(examples()) == ["flat", "string", "struct"]


@pytest.mark.parametrize("name", ["flat", "struct", "string"])
def test_example_bytes_match_the_writer(name):
    body = examples()[name]
    schema, value, dump = parts(body)
    image = write(schema, value)
    assert xxd(image).splitlines() == dump.splitlines()
    n, _, spaces = header_of(image)
    stated = NUMBERS.search(body)
    assert stated is not None and tuple(map(int, stated.groups())) == (n, 8 + n, spaces)
    assert f"{len(image)} bytes." in body
    printed = [(t, d, [int(x) for x in s.split(",") if x.strip()], int(b), int(e), int(o))
               for t, d, s, b, e, o in ROW.findall(body)]
    assert printed == tensor_rows(image)


def test_examples_are_valid_files(tmp_path):
    # What the document shows must also pass the reader's full validation.
    from tensogram import metatensor as mt

    for name, body in examples().items():
        schema, value, _ = parts(body)
        path = tmp_path / f"{name}.safetensors"
        path.write_bytes(write(schema, value))
        assert mt.load_file(path).keys() == json.loads(value).keys()


def test_xxd_layout():
    # The dump format, including a short last line, checked against a known rendering.
    dump = xxd(b"{\"a\":1}" + bytes(range(10)))
    assert dump.splitlines() == [
        "00000000: 7b22 6122 3a31 7d00 0102 0304 0506 0708  {\"a\":1}.........",
        "00000010: 09                                       .",
    ]


if __name__ == "__main__":
    for example_name, example_body in examples().items():
        sys.stdout.write(section(example_name, *parts(example_body)[:2]) + "\n\n")
