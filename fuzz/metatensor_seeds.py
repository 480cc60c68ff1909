#!/usr/bin/env python3
"""Writes the seed corpora of the metatensor fuzz targets.

    metatensor_seeds.py FILE_DIR SCHEMA_DIR

FILE_DIR receives two small valid metatensor files built byte by byte from
spec 06 (Appendix A and the worked example of section 6.7) plus truncated
copies; SCHEMA_DIR receives their schemas as JSON text.
"""
import json
import os
import struct
import sys

F32 = {"type": "number", "TypeDef:Float32": True}
STRING = {"type": "string", "TypeDef:String": True}


def compact(doc):
    return json.dumps(doc, separators=(",", ":"), sort_keys=True)


def metatensor_file(schema, layout, alignment, tensors):
    """tensors: list of (name, dtype, shape, bytes) in data order, no holes."""
    meta = {
        "metatensor.alignment": str(alignment),
        "metatensor.endianness": "little",
        "metatensor.layout": compact(layout),
        "metatensor.schema": compact(schema),
        "metatensor.version": "1",
    }
    header = '{"__metadata__":' + compact(meta)
    offset = 0
    for name, dtype, shape, data in tensors:
        # Entry members in the order the safetensors reference writes them
        # (spec 06 §3.5 fixes the key order of __metadata__ only).
        header += "," + json.dumps(name) + ':{"dtype":%s,"shape":%s,"data_offsets":%s}' % (
            json.dumps(dtype), json.dumps(shape, separators=(",", ":")),
            json.dumps([offset, offset + len(data)], separators=(",", ":")))
        offset += len(data)
    header += "}"
    raw = header.encode()
    r_max = alignment  # every R(t) of these files equals A
    raw += b" " * ((-(8 + len(raw))) % r_max)
    return struct.pack("<Q", len(raw)) + raw + b"".join(t[3] for t in tensors)


def appendix_a():
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "required": ["w"],
              "additionalProperties": False,
              "properties": {"w": {"type": "array", "items": F32}}}
    layout = {"tensors": {"w": {"kind": "flat", "data": "w", "rank": 1, "align": 16, "dtype": "F32"}}}
    return schema, metatensor_file(schema, layout, 16, [("w", "F32", [2], struct.pack("<2f", 1.5, -2.0))])


def worked_example():
    particle = {"type": "object", "TypeDef:Struct": True, "required": ["id", "mass", "vel", "name"],
                "properties": {"id": {"type": "integer", "TypeDef:Uint32": True},
                               "mass": {"type": "number", "TypeDef:Float64": True, "minimum": 0},
                               "vel": {"type": "array", "minItems": 3, "maxItems": 3, "items": F32},
                               "name": STRING}}
    schema = {"type": "object", "$defs": {"Particle": particle},
              "properties": {"labels": {"type": "array", "items": STRING},
                             "particles": {"type": "array", "items": {"$ref": "#/$defs/Particle"}},
                             "positions": {"type": "array",
                                           "items": {"type": "array", "minItems": 3, "maxItems": 3, "items": F32}}}}
    layout = {"tensors": {
        "particles": {"kind": "struct", "data": "particles", "heap": "particles#heap", "rank": 1, "align": 64,
                      "record": {"size": 48, "align": 8, "fields": [
                          {"name": "id", "offset": 0, "type": "U32", "shape": []},
                          {"name": "mass", "offset": 8, "type": "F64", "shape": []},
                          {"name": "vel", "offset": 16, "type": "F32", "shape": [3]},
                          {"name": "name", "offset": 32, "type": "string", "shape": []}]}},
        "labels": {"kind": "blob", "data": "labels", "heap": "labels#heap", "rank": 1, "align": 64,
                   "item": {"type": "string"}},
        "positions": {"kind": "flat", "data": "positions", "rank": 2, "align": 64, "dtype": "F32"}}}
    labels = b"".join(struct.pack("<QQ", o, n) for o, n in [(0, 3), (3, 5), (8, 4)])
    particles = b""
    for i, (mass, name_ref) in enumerate([(1.5, (0, 5)), (2.25, (5, 4))]):
        particles += struct.pack("<I4xd3f4xQQ", 7 + i, mass, 0.5, 1.0 * i, -1.0, *name_ref)
    tensors = [("labels", "U8", [3, 16], labels), ("__pad__0", "U8", [16], bytes(16)),
               ("labels#heap", "U8", [12], b"redgreenblue"), ("__pad__1", "U8", [52], bytes(52)),
               ("particles", "U8", [2, 48], particles), ("__pad__2", "U8", [32], bytes(32)),
               ("particles#heap", "U8", [9], b"alphabeta"), ("__pad__3", "U8", [55], bytes(55)),
               ("positions", "F32", [2, 3], struct.pack("<6f", *range(6)))]
    return schema, metatensor_file(schema, layout, 64, tensors)


def main():
    file_dir, schema_dir = sys.argv[1], sys.argv[2]
    os.makedirs(file_dir, exist_ok=True)
    os.makedirs(schema_dir, exist_ok=True)
    for name, (schema, data) in {"appendix_a": appendix_a(), "worked_example": worked_example()}.items():
        with open(os.path.join(file_dir, name + ".mt"), "wb") as f:
            f.write(data)
        for cut in (8, 16, len(data) // 2, len(data) - 1):
            with open(os.path.join(file_dir, "%s.trunc%d" % (name, cut)), "wb") as f:
                f.write(data[:cut])
        with open(os.path.join(schema_dir, name + ".json"), "w") as f:
            f.write(compact(schema))


if __name__ == "__main__":
    main()
