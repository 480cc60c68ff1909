"""The GIL is released during encode, decode and file I/O (spec 04 B.1)."""

import sys
import threading
import time

import numpy as np
import pytest

import tensogram

N = 2_000_000  # 16 MB of float64


@pytest.fixture(scope="module")
def data():
    return np.cumsum(np.random.default_rng(7).standard_normal(N))


@pytest.fixture(scope="module")
def message(data):
    return tensogram.encode({}, [({"type": "ntensor", "shape": [N], "dtype": "float64", "compression": "zstd"}, data)])


def progress_during(call):
    """How many times another Python thread got to run while `call` ran."""
    counter = [0]
    stop = threading.Event()
    started = threading.Event()

    def spin():
        started.set()
        while not stop.is_set():
            counter[0] += 1

    # A short switch interval bounds what the spinner can do between reading
    # `before` and the call taking over (one interval with the GIL held):
    # with the default 5 ms a fast machine spins ~100k times there, which
    # made the held-GIL control below flaky.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0002)
    try:
        t = threading.Thread(target=spin)
        t.start()
        started.wait()
        time.sleep(0.02)
        before = counter[0]
        t0 = time.perf_counter()
        call()
        elapsed = time.perf_counter() - t0
        during = counter[0] - before
        stop.set()
        t.join()
    finally:
        sys.setswitchinterval(interval)
    return during, elapsed


@pytest.mark.parametrize("operation", ["decode", "encode", "file", "validate"])
def test_other_threads_run_while_the_library_works(operation, data, message, tmp_path):
    path = tmp_path / "g.tgm"
    path.write_bytes(message * 3)
    desc = {"type": "ntensor", "shape": [N], "dtype": "float64", "compression": "zstd"}
    calls = {
        "decode": lambda: [tensogram.decode(message) for _ in range(3)],
        "encode": lambda: [tensogram.encode({}, [(desc, data)]) for _ in range(3)],
        "file": lambda: [tensogram.TensogramFile.open(path).decode_message(i) for i in range(3)],
        "validate": lambda: tensogram.validate_file(path, level="full"),
    }
    during, elapsed = progress_during(calls[operation])
    # With the GIL released the spinner runs all along (millions of steps per
    # second); held, it only gets the one switch interval (0.2 ms) before the
    # call starts, which the control below measures.
    rate = during / elapsed
    assert rate > RATE_WITH_GIL_RELEASED, f"{operation}: only {during} spinner steps in {elapsed:.3f}s"


RATE_WITH_GIL_RELEASED = 2_000_000  # spinner steps per second


def test_the_progress_probe_detects_a_held_gil():
    # Control: sum() over a range is one C call that keeps the GIL for about
    # three quarters of a second. The spinner can still run at the switch points
    # just before and after it (one switch interval each, longer when the OS
    # keeps the main thread off a busy core); a long call keeps those few
    # steps small against the rate of a released GIL (a quarter second was
    # not long enough when compilers kept both cores busy). Lowest of three.
    rates = []
    for _ in range(3):
        during, elapsed = progress_during(lambda: sum(range(60_000_000)))
        rates.append(during / elapsed)
    assert min(rates) < RATE_WITH_GIL_RELEASED / 4, rates


# How much a second thread gains is a speed figure, measured by
# bench/python_bench.py (decode_2threads_speedup) against the machine, not
# asserted here: the tests above prove the GIL is released.
