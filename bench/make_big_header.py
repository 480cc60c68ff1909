#!/usr/bin/python3
"""Writes large-header safetensors / metatensor files for the header-parsing
rows of metatensor_bench (issue 27 item 4).

  make_big_header.py KIND TENSORS NAME_LEN META_BYTES OUT

KIND is "st" (plain safetensors: TENSORS F32[4] tensors with names of about
NAME_LEN bytes, a __metadata__ with long string values totalling META_BYTES)
or "mt" (a metatensor file: the same tensors as flat logical tensors of one
schema, with schema and layout table in __metadata__, A = 16).
"""
import json
import sys


def names(count, name_len):
    # Long, realistic-looking names with a unique numeric part.
    stem = "model.encoder.layers.block.attention.projection.weight."
    out = []
    for i in range(count):
        base = f"{stem}{i:07d}."
        pad = max(0, name_len - len(base))
        out.append(base + ("abcdefghijklmnopqrstuvwxyz" * (pad // 26 + 1))[:pad])
    return out


def long_strings(total):
    # Strings with some escapes (quotes, newlines, non-ASCII) in each chunk.
    chunk = 'Lorem ipsum "dolor" sit amet\nconsectetur \u00e9l\u00e8ve \\ adipiscing elit. ' * 64
    out = {}
    i = 0
    while total > 0:
        n = min(total, 4_000_000)
        out[f"user.note.{i}"] = (chunk * (n // len(chunk) + 1))[:n]
        total -= n
        i += 1
    return out


def main():
    kind, count, name_len, meta_bytes, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    tensor_names = names(count, name_len)
    meta = long_strings(meta_bytes)
    if kind == "mt":
        item = {"type": "number", "TypeDef:Float32": True}
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                  "properties": {n: {"type": "array", "items": item} for n in tensor_names}}
        layout = {"tensors": {n: {"kind": "flat", "data": n, "rank": 1, "align": 16, "dtype": "F32"}
                              for n in tensor_names}}
        meta["metatensor.version"] = "1"
        meta["metatensor.endianness"] = "little"
        meta["metatensor.alignment"] = "16"
        meta["metatensor.schema"] = json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
        meta["metatensor.layout"] = json.dumps(layout, separators=(",", ":"), ensure_ascii=False)
    header = {"__metadata__": dict(sorted(meta.items()))}
    for i, n in enumerate(tensor_names):
        header[n] = {"dtype": "F32", "shape": [4], "data_offsets": [16 * i, 16 * i + 16]}
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    text += b" " * ((-(8 + len(text))) % 16)
    assert len(text) <= 100_000_000, len(text)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        f.write(bytes(16 * count))
    print(f"{path}: header {len(text) / 1e6:.1f} MB, {count} tensors")


main()
