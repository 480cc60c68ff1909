"""The Python examples of docs/metatensor-python.md run as written (so the
tutorial shows only what exists). The third example reads a file with
records, strings and lists, bound to `f` for it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
from test_records_blobs import SCHEMA, values

from tensogram import _metatensor
from tensogram import metatensor as mt

DOC = Path(__file__).resolve().parents[2] / "docs" / "metatensor-python.md"


def blocks() -> list[str]:
    # The tutorial's; the PyTorch and remote sections after it are run by test_torch and test_remote.
    tutorial = DOC.read_text().split("\n## API summary")[0]
    return re.findall(r"```python\n(.*?)```", tutorial, flags=re.S)


def test_the_tutorial_runs(tmp_path, rng, capsys):
    code = blocks()
    assert len(code) == 8
    namespace: dict = {}
    exec(code[0], namespace)
    exec(code[1], namespace)
    assert namespace["mine"][0, 0] == 1.0 and not namespace["embed"].flags.writeable
    rich = tmp_path / "rich.safetensors"
    vals = values(rng)
    rich.write_bytes(_metatensor.serialize_json(json.dumps(SCHEMA), json.dumps(vals), {}))
    with mt.safe_open(rich, framework="np") as f:
        scope = {"f": f, "np": np}
        exec(code[2], scope)
        assert len(scope["heavy"]) == sum(r["mass"] > 1.0 for r in vals["particles"])
    exec(code[3], {})
    assert capsys.readouterr().out.splitlines()[-1].startswith("ST_HEADER_LENGTH ST_HEADER_LENGTH:")


def test_the_writing_validation_and_diff_steps_run(capsys):
    code = blocks()
    exec(code[4], {})  # records, strings, bytes, ragged rows; asserts what it reads back
    assert capsys.readouterr().out.strip() == str({"type": "array", "items": mt.string()})
    exec(code[5], {})  # an explicit schema
    exec(code[6], {})  # validate
    assert capsys.readouterr().out.strip() == "ST_INCOMPLETE"
    exec(code[7], {})  # diff
    assert capsys.readouterr().out.strip().splitlines()[-1] == "verdict: convertible"
