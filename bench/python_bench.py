"""Python binding benchmark: the module's encode/decode throughput next to
peers measured in the same run on the same bytes.

    PYTHONPATH=build-bench/python /usr/bin/python3 bench/python_bench.py [--json]

Peers: a numpy copy of the same bytes (one memory pass: the physical limit for
an encode that must produce a new buffer), and the same call made with one
thread vs two threads (the GIL is released, so two threads should approach
twice the throughput of one on a 2-core machine).
"""

import json
import sys
import threading
import time

import numpy as np

import tensogram

N = 16 * 1024 * 1024  # float64 values: 128 MiB
SZIP = {"szip_rsi": 128, "szip_block_size": 16, "szip_flags": 8}
PIPELINES = {
    "none": {},
    "zstd": {"compression": "zstd", "zstd_level": 3},
    "lz4": {"compression": "lz4"},
    "blosc2": {"compression": "blosc2"},
    "sp24+szip": {"encoding": "simple_packing", "sp_bits_per_value": 24, "compression": "szip", **SZIP},
    "sp16": {"encoding": "simple_packing", "sp_bits_per_value": 16},
}


def best_of(fn, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def in_threads(fn, threads):
    ts = [threading.Thread(target=fn) for _ in range(threads)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return time.perf_counter() - t0


def main():
    rng = np.random.default_rng(42)
    values = 250.0 + 60.0 * (np.cumsum(rng.standard_normal(N)) % 1.0)  # smooth-ish, 250–310
    mb = values.nbytes / 1e6
    copy_s = best_of(lambda: values.copy())
    rows = []
    for name, pipeline in PIPELINES.items():
        desc = {"type": "ntensor", "shape": [N], "dtype": "float64", **pipeline}
        msg = tensogram.encode({}, [(desc, values)])
        enc = best_of(lambda: tensogram.encode({}, [(desc, values)]))
        dec = best_of(lambda: tensogram.decode(msg))
        one = min(in_threads(lambda: [tensogram.decode(msg) for _ in range(2)], 1) for _ in range(2))
        two = min(in_threads(lambda: tensogram.decode(msg), 2) for _ in range(2))
        rows.append({
            "pipeline": name, "ratio_pct": 100.0 * len(msg) / values.nbytes,
            "encode_MBps": mb / enc, "decode_MBps": mb / dec,
            "encode_vs_copy": copy_s / enc, "decode_vs_copy": copy_s / dec,
            "decode_2threads_speedup": one / two,
        })  # fmt: skip
    if "--json" in sys.argv:
        print(json.dumps({"values": N, "numpy_copy_MBps": mb / copy_s, "rows": rows}, indent=2))
        return
    print(f"{N} float64 values ({mb:.0f} MB); numpy copy (peer): {mb / copy_s:.0f} MB/s")
    print(f"{'pipeline':<11} {'size %':>7} {'enc MB/s':>9} {'dec MB/s':>9} {'enc/copy':>9} {'dec/copy':>9} {'2 thr':>6}")
    for r in rows:
        print(f"{r['pipeline']:<11} {r['ratio_pct']:7.2f} {r['encode_MBps']:9.0f} {r['decode_MBps']:9.0f} "
              f"{r['encode_vs_copy']:9.2f} {r['decode_vs_copy']:9.2f} {r['decode_2threads_speedup']:6.2f}")
    print("decode of 'none' returns a view of the message (no copy), hence dec/copy > 1")


if __name__ == "__main__":
    main()
