#!/usr/bin/env python3
"""Seed corpora of the tool fuzz targets (fuzz/run.sh).

    tool_seeds.py NPY_DIR CLI_DIR

NPY_DIR: small .npy files (format 1.0 and 2.0; plain, Fortran-order, bool,
big-endian, complex, text and structured dtypes), written byte by byte as
numpy.lib.format lays them out, so numpy is not needed.
CLI_DIR: inputs of fuzz_cli_pipeline: a selector byte, then argv tokens
separated by NUL bytes (one pipeline of spec 04 §A.5 per seed).
"""
import os
import struct
import sys


def npy(descr, shape, data, fortran=False, version=1):
    shape_text = "(" + "".join(f"{d}, " for d in shape).rstrip(" ") + ")"
    if len(shape) > 1:
        shape_text = "(" + ", ".join(str(d) for d in shape) + ")"
    header = "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (
        descr if descr.startswith("[") else repr(descr),
        "True" if fortran else "False",
        shape_text,
    )
    length_size = 2 if version == 1 else 4
    total = 6 + 2 + length_size + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    length = struct.pack("<H" if version == 1 else "<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + length + header.encode("ascii") + data


def main():
    npy_dir, cli_dir = sys.argv[1], sys.argv[2]
    os.makedirs(npy_dir, exist_ok=True)
    os.makedirs(cli_dir, exist_ok=True)
    seeds = {
        "f8": npy("<f8", [3], struct.pack("<3d", 1.5, -2.0, 3.25)),
        "f4_2d_fortran": npy("<f4", [2, 3], struct.pack("<6f", *range(6)), fortran=True),
        "i2_be": npy(">i2", [4], struct.pack(">4h", 1, -1, 300, -300)),
        "u1_scalar": npy("|u1", [], b"\x07"),
        "bool": npy("|b1", [3], b"\x00\x01\x01"),
        "c16": npy("<c16", [1], struct.pack("<2d", 1.0, -1.0)),
        "text_u": npy("<U3", [2], "abcde\x00".encode("utf-32-le")),
        "text_s": npy("|S4", [2], b"abcdxy\x00\x00"),
        "struct": npy("[('x', '<f4'), ('n', '<i8', (2,))]", [2], bytes(2 * 20)),
        "nested": npy("[('p', [('a', '|u1'), ('', '|V3')]), ('q', '<u4')]", [1], bytes(8)),
        "v2_empty": npy("<f8", [0, 5], b"", version=2),
    }
    for name, data in seeds.items():
        with open(os.path.join(npy_dir, name + ".npy"), "wb") as f:
            f.write(data)

    pipelines = {
        "none": (0, []),
        "zstd": (0, ["--compression", "zstd", "--compression-level", "5"]),
        "lz4_shuffle": (2, ["--filter", "shuffle", "--compression", "lz4"]),
        "packing": (8, ["--encoding", "simple_packing", "--bits", "12", "--compression", "szip"]),
        "blosc2": (17, ["--compression=blosc2", "--compression-level=9"]),
        "zfp": (1, ["--compression", "zfp", "--zfp-rate", "16"]),
        # The largest fixed rate the codec takes, and the campaign finding
        # of 2026-11-30 (a 7 GB stream for 64 values), now a usage error.
        "zfp_top_rate": (1, ["--compression", "zfp", "--zfp-rate", "4164.5"]),
        "zfp_huge_rate": (1, ["--compression", "zfp", "--zfp-rate", "886737121"]),
        "zfp_tol": (9, ["--compression", "zfp", "--zfp-mode", "fixed_accuracy", "--zfp-tolerance", "0.01"]),
        "sz3": (1, ["--compression", "sz3", "--sz3-mode", "rel", "--sz3-bound", "1e-3"]),
        "szip": (5, ["--compression", "szip", "--szip-rsi", "64", "--szip-block-size", "32"]),
        "bad": (1, ["--compression", "zfp", "--sz3-bound", "1"]),
    }
    for name, (selector, tokens) in pipelines.items():
        with open(os.path.join(cli_dir, name), "wb") as f:
            f.write(bytes([selector]) + b"\x00".join(t.encode() for t in tokens))


if __name__ == "__main__":
    main()
