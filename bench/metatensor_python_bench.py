"""tensogram.metatensor from Python, each figure next to a peer measured in the same run.

    PYTHONPATH=build-bench/python /usr/bin/python3 bench/metatensor_python_bench.py [--big-mib 1024]
        [--kind-mib 256] [--dir DIR] [--repeats 5] [--json] [--json-file PATH]

Rows (page cache warm: every file was just written):

* open vs data size: `safe_open` alone and `safe_open` + the first `get_tensor` of one tensor
  of each kind (flat F32; struct {id U64, name String} with 40-byte names; 48-byte strings;
  ragged lists of 12 F32: 64 bytes per element), `--kind-mib` MiB against 1 MiB of the same kind.
* `get_tensor` of a `--big-mib` MiB flat tensor + `.sum()` (every page touched) against
  `np.memmap` of the same bytes + `.sum()`; with PyTorch installed, the same with
  `framework="pt"` against a copy-on-write `np.memmap` through `torch.from_numpy`.
* `load_file` of 128 tensors (`--big-mib` MiB together) + touching every tensor, against a
  minimal safetensors reader written here with numpy alone (8-byte header length, JSON
  header, `np.fromfile` per tensor), the way `safetensors.numpy.load_file` copies tensors out.

Goals (`--json-file PATH` writes them with the rows, for the codec matrix's goals block, which
`make bench` prints last): `safe_open` of every kind stays under 0.2 ms at `--kind-mib` MiB, and
`get_tensor` + `sum` of the flat tensor runs at >= 0.9x of `np.memmap` + `sum`.

Files (about 2 x `--big-mib` + 3 x `--kind-mib` MiB) go to a temporary directory under `--dir`,
removed at the end. Struct, string and ragged files are written through the JSON writer
(`_metatensor.serialize_json`), which needs memory and time for large sizes: the reason the
default `--kind-mib` is 256.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import struct
import sys
import tempfile
from pathlib import Path

import numpy as np
from python_bench import best_of  # bench/ is the script's directory, first on sys.path

from tensogram import _metatensor
from tensogram import metatensor as mt

try:
    import torch
except ImportError:  # the torch rows are skipped
    torch = None

MiB = 1 << 20
DIALECT = "https://json-schema.org/draft/2020-12/schema"


# ---- files ---------------------------------------------------------------------------------------

def kind_file(directory: Path, kind: str, size: int) -> Path:
    """One tensor "x" of `kind` holding about `size` bytes, 64 bytes per element."""
    n = size // 64
    path = directory / f"{kind}-{size // MiB}.safetensors"
    if kind == "flat":
        mt.save_file({"x": np.ones(n * 16, np.float32)}, path)
        return path
    string = {"type": "string", "TypeDef:String": True}
    f32 = {"type": "number", "TypeDef:Float32": True}
    if kind == "string":
        items, element = string, json.dumps("s" * 48)
    elif kind == "ragged":
        items, element = {"type": "array", "TypeDef:List": True, "items": f32}, json.dumps([0] * 12)
    else:
        items = {"type": "object", "TypeDef:Struct": True, "required": ["id", "name"],
                 "properties": {"id": {"type": "integer", "TypeDef:Uint64": True}, "name": string}}
        element = json.dumps({"id": 7, "name": "n" * 40})
    schema = {"$schema": DIALECT, "type": "object", "properties": {"x": {"type": "array", "items": items}},
              "required": ["x"]}
    value = '{"x":[' + ",".join([element] * n) + "]}"
    path.write_bytes(_metatensor.serialize_json(json.dumps(schema), value, {}))
    return path


def many_file(directory: Path, size: int, count: int = 128) -> Path:
    per = size // count // 4
    path = directory / f"many-{size // MiB}.safetensors"
    mt.save_file({f"t{i:03d}": np.full(per, float(i), np.float32) for i in range(count)}, path)
    return path


# ---- the peer: a minimal safetensors reader (numpy alone) ----------------------------------------

ST_NUMPY = {"BOOL": "?", "U8": "u1", "I8": "i1", "U16": "<u2", "I16": "<i2", "U32": "<u4", "I32": "<i4",
            "U64": "<u8", "I64": "<i8", "F16": "<f2", "F32": "<f4", "F64": "<f8"}


def peer_header(path: Path) -> tuple[int, dict]:
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    header.pop("__metadata__", None)
    return 8 + n, header


def peer_load_file(path: Path) -> dict:
    data, header = peer_header(path)
    out = {}
    with open(path, "rb") as f:
        for name, e in header.items():
            begin, end = e["data_offsets"]
            dtype = np.dtype(ST_NUMPY[e["dtype"]])
            f.seek(data + begin)
            out[name] = np.fromfile(f, dtype=dtype, count=(end - begin) // dtype.itemsize).reshape(e["shape"])
    return out


def peer_memmap(path: Path, name: str, mode: str = "r") -> np.ndarray:
    data, header = peer_header(path)
    e = header[name]
    return np.memmap(path, dtype=ST_NUMPY[e["dtype"]], mode=mode, offset=data + e["data_offsets"][0],
                     shape=tuple(e["shape"]))


# ---- rows ----------------------------------------------------------------------------------------

def open_rows(directory: Path, kind_mib: int, big_mib: int, repeats: int) -> list[dict]:
    rows = []
    for kind in ("flat", "struct", "string", "ragged"):
        sizes = [1, kind_mib] + ([big_mib] if kind == "flat" and big_mib != kind_mib else [])
        paths = {s: kind_file(directory, kind, s * MiB) for s in sizes}

        def just_open(p):
            with mt.safe_open(p, framework="np"):
                pass

        def open_and_view(p):
            with mt.safe_open(p, framework="np") as f:
                f.get_tensor("x")

        for label, fn in (("open", just_open), ("open + get_tensor", open_and_view)):
            small = best_of(lambda: fn(paths[1]), repeats)
            for s in sizes[1:]:
                large = best_of(lambda: fn(paths[s]), repeats)
                rows.append({"row": f"{label}, {kind}, {s} MiB (peer: 1 MiB)", "value_ms": large * 1e3,
                             "peer_ms": small * 1e3, "ratio": large / small})
        for p in paths.values():
            p.unlink()
    return rows


def flat_sum_rows(directory: Path, big_mib: int, repeats: int) -> list[dict]:
    path = kind_file(directory, "flat", big_mib * MiB)
    expected = float(big_mib * MiB // 4)

    def check(total):
        assert abs(float(total) - expected) <= 1e-6 * expected, total

    def ours():
        with mt.safe_open(path, framework="np") as f:
            check(f.get_tensor("x").sum())

    def peer():
        check(peer_memmap(path, "x").sum())

    rows = []
    t_peer = best_of(peer, repeats)
    t_ours = best_of(ours, repeats)
    gb = big_mib * MiB / 1e9
    rows.append({"row": f"get_tensor + sum, flat {big_mib} MiB (GB/s; peer: np.memmap + sum)",
                 "value": gb / t_ours, "peer": gb / t_peer, "ratio": t_peer / t_ours})
    if torch is not None:
        def ours_pt():
            with mt.safe_open(path, framework="pt") as f:
                check(f.get_tensor("x").sum())

        def peer_pt():  # a copy-on-write memmap, as PyTorch needs writable memory
            check(torch.from_numpy(peer_memmap(path, "x", mode="c")).sum())

        t_peer = best_of(peer_pt, repeats)
        t_pt = best_of(ours_pt, repeats)
        rows.append({"row": f"pt: get_tensor + sum, {big_mib} MiB (GB/s; peer: memmap 'c' + from_numpy + sum)",
                     "value": gb / t_pt, "peer": gb / t_peer, "ratio": t_peer / t_pt})
    path.unlink()
    return rows


def load_rows(directory: Path, big_mib: int, repeats: int) -> list[dict]:
    path = many_file(directory, big_mib * MiB)
    gb = big_mib * MiB / 1e9

    def touch(tensors):
        return sum(float(t.sum()) for t in tensors.values())

    rows = []
    t_ours = best_of(lambda: mt.load_file(path), repeats)
    t_peer = best_of(lambda: peer_load_file(path), repeats)
    rows.append({"row": f"load_file, 128 tensors, {big_mib} MiB (ms; peer: numpy safetensors reader)",
                 "value_ms": t_ours * 1e3, "peer_ms": t_peer * 1e3, "ratio": t_ours / t_peer})
    t_ours = best_of(lambda: touch(mt.load_file(path)), repeats)
    t_peer = best_of(lambda: touch(peer_load_file(path)), repeats)
    rows.append({"row": f"load_file + sum of each, {big_mib} MiB (GB/s; peer: numpy safetensors reader)",
                 "value": gb / t_ours, "peer": gb / t_peer, "ratio": t_peer / t_ours})
    path.unlink()
    return rows


def goals(rows: list[dict]) -> list[dict]:
    """The goals these rows check, in the codec matrix's goals format (bench/goals.hpp)."""
    out = []
    for r in rows:
        name = r["row"]
        if name.startswith("open, "):  # O(header): the large file opens as fast as 1 MiB, < 0.2 ms
            size = name.split(", ")[2].split(" (")[0]
            out.append({"goal": f"python safe_open, {name.split(', ')[1]}, {size}: ms",
                        "value": r["value_ms"], "target": 0.2, "comparison": "<=",
                        "note": f"1 MiB: {r['peer_ms']:.3f} ms (O(header))"})
        elif name.startswith("get_tensor + sum"):
            out.append({"goal": "python get_tensor+sum flat: np.memmap time / ours",
                        "value": r["ratio"], "target": 0.9, "comparison": ">=",
                        "note": f"{r['value']:.2f} vs {r['peer']:.2f} GB/s"})
        elif name.startswith("pt: get_tensor + sum"):
            out.append({"goal": "python torch get_tensor+sum: memmap+from_numpy time / ours",
                        "value": r["ratio"], "target": 0.9, "comparison": ">=",
                        "note": f"{r['value']:.2f} vs {r['peer']:.2f} GB/s"})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--big-mib", type=int, default=1024)
    parser.add_argument("--kind-mib", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dir", default=tempfile.gettempdir())
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--json-file", help="also write the rows and goals as JSON to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mt-python-bench-", dir=args.dir) as tmp:
        directory = Path(tmp)
        rows = open_rows(directory, args.kind_mib, args.big_mib, args.repeats)
        rows += flat_sum_rows(directory, args.big_mib, args.repeats)
        rows += load_rows(directory, args.big_mib, args.repeats)
    report = {"machine": platform.machine(), "python": sys.version.split()[0],
              "torch": torch.__version__ if torch else None, "rows": rows, "goals": goals(rows)}
    if args.json_file:
        Path(args.json_file).write_text(json.dumps(report, indent=1) + "\n")
    if args.json:
        json.dump(report, sys.stdout, indent=1)
        return
    print(f"{'row':<86}{'metatensor':>12}{'peer':>12}{'ratio':>9}")
    for r in rows:
        if "value_ms" in r:
            print(f"{r['row']:<86}{r['value_ms']:>9.3f} ms{r['peer_ms']:>9.3f} ms{r['ratio']:>8.2f}x")
        else:
            print(f"{r['row']:<86}{r['value']:>7.2f} GB/s{r['peer']:>7.2f} GB/s{r['ratio']:>8.2f}x")
    print("ratio: time / peer time for ms rows; rate / peer rate for GB/s rows (>= 1 is at least as fast)")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()
