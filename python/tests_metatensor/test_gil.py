"""The GIL is released while files are written, copied in and validated:
a Python thread keeps running while another thread is inside the library."""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest

from tensogram import metatensor as mt

N = 4_000_000  # 32 MB of float64


@pytest.fixture(scope="module")
def tensors():
    return {f"t{i}": np.arange(N // 4, dtype=np.float64) + i for i in range(4)}


def steps_per_second_beside(work) -> float:
    """Runs `work` in a thread while the main thread counts loop steps; the
    worker reads the count right before and right after the call, so only
    steps made while it was inside the call count."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0002)  # a held GIL then lets at most 0.2 ms of steps through
    steps = [0]
    result = []
    done = threading.Event()

    def worker():
        before, t0 = steps[0], time.perf_counter()
        work()
        result.append((steps[0] - before) / (time.perf_counter() - t0))
        done.set()

    try:
        t = threading.Thread(target=worker)
        t.start()
        while not done.is_set():
            steps[0] += 1
        t.join()
    finally:
        sys.setswitchinterval(interval)
    return result[0]


# A free Python thread counts millions of steps per second.
RELEASED = 1_500_000


@pytest.mark.parametrize("operation", ["save", "save_file", "load"])
def test_other_threads_run_while_the_library_works(operation, tensors, tmp_path):
    image = mt.save(tensors)
    path = tmp_path / "big.safetensors"
    calls = {
        "save": lambda: [mt.save(tensors) for _ in range(3)],
        "save_file": lambda: [mt.save_file(tensors, path) for _ in range(3)],
        "load": lambda: [mt.load(image) for _ in range(3)],
    }
    rate = steps_per_second_beside(calls[operation])
    assert rate > RELEASED, f"{operation}: {rate:.0f} steps/s"


def test_the_probe_detects_a_held_gil():
    # Control: one C call that keeps the GIL for a fraction of a second.
    rates = [steps_per_second_beside(lambda: sum(range(20_000_000))) for _ in range(3)]
    assert min(rates) < RELEASED / 2, rates
