#!/usr/bin/env python3
"""Holds every #include of the library to the layer order (docs/architecture.md).

The layers of libtensogram, bottom to top, are read from cmake/layers.cmake
(TENSOGRAM_LAYERS); the products built on top of them follow:
importers (GRIB/NetCDF) and metatensor (with its streaming rooms). A file of
a layer or product may include the public headers (include/tensogram/<x>/,
include/metatensor/) and private headers (src/<x>/) of its own and lower
ranks only. The build enforces the same order for public headers (each layer
compiles against a staging directory holding only its own and lower layers'
headers, see the probes beside this file); private headers are included by
their path from the project root, which no include path can hide, hence
this check.

usage: check_includes.py PROJECT_ROOT      exit status 1 and a list on a violation
       check_includes.py --self-test       proves the check finds planted violations
"""

import pathlib
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^">]+)[">]', re.MULTILINE)


def layer_order(root):
    text = (root / "cmake" / "layers.cmake").read_text()
    match = re.search(r"^set\(TENSOGRAM_LAYERS ([^)]*)\)", text, re.MULTILINE)
    if not match:
        sys.exit("check_includes.py: no set(TENSOGRAM_LAYERS ...) in cmake/layers.cmake")
    return match.group(1).split() + ["importers", "metatensor"]


def owner(relative, ranks):
    """The layer or product a file (or an included path) belongs to, or None."""
    parts = relative.parts
    if parts[0] == "src" and len(parts) > 2 and parts[1] in ranks:
        return parts[1]
    if parts[0] == "include":
        parts = parts[1:]
    if not parts:
        return None
    if parts[0] == "metatensor" or parts[0] == "metatensor.hpp":
        return "metatensor"
    if parts[0] == "tensogram" and len(parts) > 1:
        name = parts[1].removesuffix(".hpp").removesuffix(".h")
        if name in ranks:
            return name
    return None


def violations(root):
    ranks = {name: i for i, name in enumerate(layer_order(root))}
    found = []
    files = [p for d in ("src", "include") for p in (root / d).rglob("*") if p.suffix in (".cpp", ".hpp", ".h")]
    for path in sorted(files):
        relative = path.relative_to(root)
        mine = owner(relative, ranks)
        if mine is None:
            continue  # umbrella headers, the C header: above every layer
        text = path.read_text(encoding="utf-8")
        for match in INCLUDE.finditer(text):
            included = pathlib.PurePosixPath(match.group(1))
            theirs = owner(included, ranks)
            if theirs is None:
                continue  # system and third-party headers, same-folder includes
            if ranks[theirs] > ranks[mine]:
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{relative}:{line}: layer '{mine}' includes {included} of the higher layer '{theirs}'")
    return found


def self_test():
    """Plants one violation of each kind in a scratch tree and one legal include."""
    with tempfile.TemporaryDirectory() as scratch:
        root = pathlib.Path(scratch)
        (root / "cmake").mkdir()
        (root / "cmake" / "layers.cmake").write_text("set(TENSOGRAM_LAYERS core cbor codecs format message io)\n")
        planted = {
            "src/core/a.cpp": '#include "tensogram/message/decode.hpp"\n',  # public, higher
            "src/codecs/b.cpp": '#include "src/io/http_support.hpp"\n',  # private, higher
            "include/tensogram/format/c.hpp": "#include <tensogram/io/file.hpp>\n",  # header, higher
            "src/io/d.cpp": '#include "metatensor/file.hpp"\n',  # a product above the library
            "src/message/ok.cpp": '#include "tensogram/codecs/pipeline.hpp"\n#include "src/core/x.hpp"\n',
        }
        for name, text in planted.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        found = violations(root)
        expected = ["src/core/a.cpp", "src/codecs/b.cpp", "include/tensogram/format/c.hpp", "src/io/d.cpp"]
        flagged = sorted(line.split(":")[0] for line in found)
        if flagged != sorted(expected):
            print("self-test FAILED: flagged", flagged, "expected", sorted(expected))
            return 1
    print("self-test: the four planted violations are found, the legal includes pass")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    found = violations(pathlib.Path(sys.argv[1]).resolve())
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} include(s) against the layer order", file=sys.stderr)
        return 1
    print("every include follows the layer order")
    return 0


if __name__ == "__main__":
    sys.exit(main())
