"""The xarray engine on dask.distributed: one worker process against two.

    PYTHONPATH=build-bench/python /usr/bin/python3 bench/python/dask_scaling.py [options]

Writes (once; reused while its parameters match) a multi-message ``.tgm``
file whose objects are compressed so that reading it is decode-bound, then
computes the same reduction -- the mean of every field over its horizontal
axes, for every message -- on a ``LocalCluster`` of 1 and one of 2 worker
processes with one thread each, opened with
``tensogram_xarray.open_datasets(path, chunks={})`` (one dask chunk per
object).  A warm-up run per cluster pays for imports and file opening; the
timed runs follow, alternating between the two clusters.  The eager single-process figure (no dask: fully load,
then reduce) is printed for reference, and every dask result is checked
against it.  The workers' CPU time per run is printed beside the wall time:
on a machine shared with other work, wall time alone cannot tell a cluster
that scales from one that was starved of CPU.

Options: --dir (where the file goes; default: the system temp directory),
--messages, --fields (objects per message), --side (each object is
side x side float64), --pipeline (sp16-szip or zstd), --repeat, --json.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import tempfile
import time

import numpy as np

import tensogram
import tensogram_xarray

SZIP = {"szip_rsi": 128, "szip_block_size": 16, "szip_flags": 8}
PIPELINES = {
    # GRIB-style: 16-bit simple packing, then szip; decodes to float64.
    "sp16-szip": {"encoding": "simple_packing", "sp_bits_per_value": 16, "compression": "szip", **SZIP},
    "zstd": {"compression": "zstd", "zstd_level": 3},
}


def smooth_field(rng: np.random.Generator, side: int, phase: float) -> np.ndarray:
    """A smooth large-scale pattern plus small noise: compresses like real
    gridded fields do (much better than white noise, far from trivially)."""
    y = np.linspace(0.0, np.pi, side)[:, None]
    x = np.linspace(0.0, 2.0 * np.pi, side)[None, :]
    base = 280.0 + 25.0 * np.cos(y) * np.sin(3.0 * x + phase) + 5.0 * np.sin(7.0 * y + phase)
    return base + 0.5 * rng.standard_normal((side, side))


def write_file(path: str, messages: int, fields: int, side: int, pipeline: str) -> None:
    rng = np.random.default_rng(1)
    desc = {"type": "ntensor", "shape": [side, side], "dtype": "float64", **PIPELINES[pipeline]}
    tmp = path + ".part"
    f = tensogram.TensogramFile.create(tmp)
    for m in range(messages):
        meta = {"base": [{"name": f"f{k}", "mars": {"step": 6 * m}} for k in range(fields)]}
        f.append(meta, [(desc, smooth_field(rng, side, 0.1 * m + k)) for k in range(fields)])
    del f
    os.replace(tmp, path)


def start_cluster(n_workers: int, workdir: str):
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        processes=True,
        n_workers=n_workers,
        threads_per_worker=1,
        dashboard_address=":0",
        local_directory=workdir,
        silence_logs=logging.ERROR,
    )
    client = Client(cluster, set_as_default=False)
    client.wait_for_workers(n_workers)
    return cluster, client


def workers_cpu_seconds(client) -> float:
    """CPU time used so far by all worker processes of *client*'s cluster."""
    return sum(client.run(time.process_time).values())


def run_once(client, path: str) -> tuple[float, float, dict]:
    """Wall seconds and worker CPU seconds for one reduction on *client*'s
    cluster, and its result.

    The dataset is opened anew each time (outside the timing): its dask keys
    are then new, so the scheduler cannot hand back results still held from
    the previous run.
    """
    (ds,) = tensogram_xarray.open_datasets(path, chunks={})
    reduction = ds.mean(("dim_0", "dim_1"))
    cpu0 = workers_cpu_seconds(client)
    t0 = time.perf_counter()
    result = client.compute(reduction, sync=True)
    elapsed = time.perf_counter() - t0
    cpu = workers_cpu_seconds(client) - cpu0
    return elapsed, cpu, {name: result[name].values for name in result.data_vars}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default=tempfile.gettempdir())
    parser.add_argument("--messages", type=int, default=48)
    parser.add_argument("--fields", type=int, default=4)
    parser.add_argument("--side", type=int, default=1024)
    parser.add_argument("--pipeline", choices=sorted(PIPELINES), default="sp16-szip")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]

    name = f"dask-scaling-{args.pipeline}-{args.messages}x{args.fields}x{args.side}.tgm"
    path = os.path.join(args.dir, name)
    if not os.path.exists(path):
        t0 = time.perf_counter()
        write_file(path, args.messages, args.fields, args.side, args.pipeline)
        if not args.json:
            print(f"wrote {path} in {time.perf_counter() - t0:.1f} s")
    file_mb = os.path.getsize(path) / 1e6
    decoded_mb = args.messages * args.fields * args.side * args.side * 8 / 1e6

    # Eager reference: one process, no dask.
    t0 = time.perf_counter()
    (eager,) = tensogram_xarray.open_datasets(path)
    expected = eager.load().mean(("dim_0", "dim_1"))
    eager_s = time.perf_counter() - t0
    del eager

    figures: dict[int, list[float]] = {1: [], 2: []}
    cpu_figures: dict[int, list[float]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory(prefix="dask-scaling-") as workdir:
        clusters = {n: start_cluster(n, workdir) for n in (1, 2)}
        try:
            for _cluster, client in clusters.values():
                run_once(client, path)  # warm-up: imports, opening the file
            # Alternate the two clusters, so that a change in the machine's
            # load during the run weighs on both alike.
            for _ in range(args.repeat):
                for n, (_cluster, client) in clusters.items():
                    elapsed, cpu, result = run_once(client, path)
                    for var, values in result.items():
                        # Chunked means sum in another order than numpy's.
                        np.testing.assert_allclose(values, expected[var].values, rtol=1e-12)
                    figures[n].append(elapsed)
                    cpu_figures[n].append(cpu)
        finally:
            for cluster, client in clusters.values():
                client.close()
                cluster.close()

    med1, med2 = statistics.median(figures[1]), statistics.median(figures[2])
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": (
            f"{platform.machine()}, {os.cpu_count()} CPUs, 1-min load average "
            f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
        ),
        "pipeline": args.pipeline,
        "messages": args.messages,
        "objects": args.messages * args.fields,
        "file_MB": round(file_mb, 1),
        "decoded_MB": round(decoded_mb, 1),
        "eager_one_process_s": round(eager_s, 3),
        "one_worker_s": [round(t, 3) for t in figures[1]],
        "two_workers_s": [round(t, 3) for t in figures[2]],
        "one_worker_cpu_s": [round(t, 3) for t in cpu_figures[1]],
        "two_workers_cpu_s": [round(t, 3) for t in cpu_figures[2]],
        "speedup_median": round(med1 / med2, 2),
    }
    if args.json:
        print(json.dumps(report))
        return
    print(
        f"{report['objects']} objects ({args.pipeline}), file {file_mb:.0f} MB, decoded {decoded_mb:.0f} MB; "
        f"{report['machine']}"
    )
    print(f"eager, one process, no dask: {eager_s:.2f} s")
    for n, label, med in ((1, "1 worker ", med1), (2, "2 workers", med2)):
        key = "one_worker" if n == 1 else "two_workers"
        print(
            f"{label}: median {med:.2f} s  runs {report[key + '_s']}  "
            f"workers' CPU s per run {report[key + '_cpu_s']}"
        )
    print(f"speed-up (median 1 worker / median 2 workers): {med1 / med2:.2f}x")


if __name__ == "__main__":
    main()
