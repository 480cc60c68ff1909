"""The Python side of the Fortran round trips (interop.F90 states the content).

    interop.py read <file>    checks what Fortran wrote, with numpy
    interop.py write <file>   writes the peer file Fortran checks
"""
import sys

import numpy as np

import tensogram


def read_fortran_file(path):
    with tensogram.TensogramFile.open(path) as f:
        assert len(f) == 2, len(f)
        m1 = f.decode_message(0, verify_hash=True)
        desc, a = m1.objects[0]
        # a(3,4) in Fortran arrives transposed: a_np[j-1, i-1] == a(i, j).
        assert a.dtype == np.float64 and a.shape == (4, 3), (a.dtype, a.shape)
        i, j = np.meshgrid(np.arange(1, 4), np.arange(1, 5))
        np.testing.assert_array_equal(a, 10.0 * i + j)
        assert m1.metadata["name"] == "grid" and m1.metadata["level"] == 850
        desc, b = f.decode_message(1, verify_hash=True).objects[0]
        assert b.dtype == np.int32 and b.shape == (4, 3, 2), (b.dtype, b.shape)
        k, j, i = np.meshgrid(np.arange(1, 5), np.arange(1, 4), np.arange(1, 3), indexing="ij")
        np.testing.assert_array_equal(b, 100 * i + 10 * j + k)
    print(f"Python read {path}")


def write_peer_file(path):
    i, j, k = np.meshgrid(np.arange(2), np.arange(3), np.arange(4), indexing="ij")
    x = (100 * i + 10 * j + k).astype(np.float32)
    y = np.arange(5, dtype=np.int64) * -(10**12)

    def descriptor(arr):
        return {"type": "ntensor", "shape": list(arr.shape), "dtype": str(arr.dtype)}

    with tensogram.TensogramFile.create(path) as f:
        f.append({"_extra_": {"source": "python"}}, [(descriptor(x), x)])
        f.append({}, [(descriptor(y), y)])
    print(f"Python wrote {path}")


if __name__ == "__main__":
    {"read": read_fortran_file, "write": write_peer_file}[sys.argv[1]](sys.argv[2])
