"""Reads the file `make demo` writes through the Python module and its xarray engine.

    PYTHONPATH=build/python /usr/bin/python3 examples/python_demo.py out/demo.tgm

It decodes the field eagerly with `tensogram`, then opens the same file lazily
with `xr.open_dataset(..., engine="tensogram", chunks=...)`: dask computes the
mean chunk by chunk, each chunk decoded with a partial (range) read, and the
two results must agree.
"""

import sys
import time

import numpy as np
import xarray as xr

import tensogram


def main(path: str) -> int:
    with tensogram.TensogramFile.open(path) as f:
        meta, objects = f[0]
        descriptor, field = objects[0]
    print(f"{path}: {len(objects)} object(s); mars = {meta.get_path('mars')}")
    print(f"  {descriptor}")
    print(f"  eager decode: {field.shape} {field.dtype}, mean {field.mean():.4f} K")

    ds = xr.open_dataset(path, engine="tensogram", chunks={})
    name = next(iter(ds.data_vars))
    dims = ds[name].dims
    chunked = xr.open_dataset(path, engine="tensogram", chunks={dims[0]: 90})[name]
    t0 = time.perf_counter()
    lazy_mean = float(chunked.mean().compute())
    elapsed = time.perf_counter() - t0
    print(f"  xarray variable {name!r} dims {dims}, {chunked.data.npartitions} dask chunks")
    print(f"  dask mean over the chunks: {lazy_mean:.4f} K in {elapsed * 1000:.0f} ms")
    if not np.isclose(lazy_mean, field.mean(), rtol=0, atol=1e-9):
        print("error: the chunked mean differs from the eager one", file=sys.stderr)
        return 1
    print("  chunked and eager results agree")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
