"""The xarray engine on a dask.distributed cluster of worker processes.

One two-process ``LocalCluster`` (one thread each) serves the whole module.
A multi-message file with three pipelines (none, zstd, simple_packing+szip)
is read from a local path and over HTTP from nginx on loopback.  Every
result computed on the workers is compared with the eager path (the same
file fully loaded without dask): bit for bit for decoded values and for
order-independent reductions, and against the identical dask graph run on
the eager data with the synchronous scheduler for sums and means, whose
floating-point result depends on the reduction tree.  Task streams and the
workers' own file-handle caches show the work ran in the worker processes.
The lazy arrays and dask graphs must pickle without payload bytes.
"""

from __future__ import annotations

import logging
import os
import pickle
import time

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

import tensogram  # noqa: E402
import tensogram_xarray  # noqa: E402
from tensogram_xarray import _files  # noqa: E402

from nginx_helpers import NginxServer, nginx_required, nginx_unavailable  # noqa: E402

STEPS = [0, 6, 12, 18, 24, 30]
NLAT, NLON = 96, 192
FILE_NAME = "fields.tgm"
SZIP = {"szip_rsi": 128, "szip_block_size": 16, "szip_flags": 8}
# The engine passes storage_options through to every worker's open.
HTTP_OPTIONS = {"timeout_ms": "30000"}

# tornado (under distributed 2022.12) warns about its own event-loop setup.
# The synchronous reference computations run while the client is active, on
# purpose; dask warns about that.
pytestmark = [
    pytest.mark.filterwarnings("ignore:make_current is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Running on a single-machine scheduler:UserWarning"),
]


def _descriptor(dtype: str, shape=(NLAT, NLON), **pipeline) -> dict:
    d = {"type": "ntensor", "shape": list(shape), "dtype": dtype}
    d.update(pipeline)
    return d


@pytest.fixture(scope="module")
def served_dir(tmp_path_factory):
    """Directory holding the test file: the local source, and nginx's root."""
    return tmp_path_factory.mktemp("dask-served")


@pytest.fixture(scope="module")
def source_data(served_dir):
    """Write FILE_NAME: one message per step, each holding two coordinates
    and three fields, one per pipeline.  Returns the values written."""
    rng = np.random.default_rng(20261127)
    lat = np.linspace(-89.0, 89.0, NLAT)
    lon = np.linspace(0.0, 358.125, NLON)
    fields = {"2t": [], "u": [], "sp": []}
    f = tensogram.TensogramFile.create(str(served_dir / FILE_NAME))
    for step in STEPS:
        t2 = (270.0 + 20.0 * rng.standard_normal((NLAT, NLON))).astype(np.float32)
        u = 15.0 * rng.standard_normal((NLAT, NLON))
        sp = 101325.0 + 900.0 * rng.standard_normal((NLAT, NLON))
        fields["2t"].append(t2)
        fields["u"].append(u)
        fields["sp"].append(sp)
        meta = {
            "base": [
                {"name": "latitude"},
                {"name": "longitude"},
                {"name": "2t", "units": "K", "mars": {"step": step}},
                {"name": "u", "units": "m s-1", "mars": {"step": step}},
                {"name": "sp", "units": "Pa", "mars": {"step": step}},
            ]
        }
        f.append(
            meta,
            [
                (_descriptor("float64", lat.shape), lat),
                (_descriptor("float64", lon.shape), lon),
                (_descriptor("float32"), t2),
                (_descriptor("float64", compression="zstd", zstd_level=3), u),
                (
                    _descriptor(
                        "float64", encoding="simple_packing", sp_bits_per_value=16, compression="szip", **SZIP
                    ),
                    sp,
                ),
            ],
        )
    del f
    return {"lat": lat, "lon": lon, **{k: np.stack(v) for k, v in fields.items()}}


@pytest.fixture(scope="module")
def nginx(served_dir, tmp_path_factory):
    why = nginx_unavailable()
    if why:
        if nginx_required():
            pytest.fail(f"{why} but TENSOGRAM_REQUIRE_NGINX=1")
        pytest.skip(why)
    with NginxServer(served_dir, tmp_path_factory.mktemp("nginx-prefix")) as server:
        yield server


@pytest.fixture(scope="module", params=["local", "http"])
def source(request, served_dir, source_data):
    """(path or URL, storage_options) of the test file."""
    if request.param == "local":
        return str(served_dir / FILE_NAME), None
    server = request.getfixturevalue("nginx")
    return server.url(FILE_NAME), HTTP_OPTIONS


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    """Two worker processes, one thread each; closed, with its processes,
    at the end of the module."""
    workdir = tmp_path_factory.mktemp("dask-workers")
    # The in-process scheduler's event loop outlives the cluster, and with it
    # the sampling profiler thread that takes the GIL every few milliseconds:
    # left on, it slows every later test of this process (test_gil measures
    # exactly that).
    with dask.config.set({"distributed.worker.profile.enabled": False}):
        cluster = distributed.LocalCluster(
            processes=True,
            n_workers=2,
            threads_per_worker=1,
            # The scheduler serves HTTP even without a dashboard, on 8787
            # unless told otherwise: ":0" takes a free port instead.
            dashboard_address=":0",
            local_directory=str(workdir),
            silence_logs=logging.ERROR,
        )
        try:
            with distributed.Client(cluster) as c:
                c.wait_for_workers(2, timeout=60)
                yield c
        finally:
            cluster.close()


def _workers(client) -> set[str]:
    return set(client.scheduler_info()["workers"])


def _forget_results(client):
    """Wait (bounded) until the scheduler holds no task: results of an
    earlier computation with the same keys (``xr.open_dataset`` names its
    chunks deterministically) would otherwise be handed back unread.
    Then empty every worker's handle cache, so that sources opened
    afterwards can only come from tasks that ran since."""

    def held(dask_scheduler):
        return len(dask_scheduler.tasks)

    deadline = time.monotonic() + 20
    while client.run_on_scheduler(held) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert client.run_on_scheduler(held) == 0, "the scheduler still holds earlier results"
    client.run(tensogram_xarray.clear_file_cache)


def _compute_on_workers(client, *lazy):
    """Compute *lazy* on the cluster, reading afresh; returns the results
    and the workers that ran the tasks."""
    _forget_results(client)
    with distributed.get_task_stream(client) as stream:
        results = client.compute(list(lazy), sync=True)
    ran_on = {record["worker"] for record in stream.data}
    assert ran_on, "no task ran on the cluster"
    assert ran_on <= _workers(client)
    return results, ran_on


def _sources_opened_by_workers(client) -> dict[str, list[str]]:
    return client.run(_files.cached_sources)


def _assert_read_by_workers(client, src, ran_on):
    opened = _sources_opened_by_workers(client)
    readers = {w for w, sources in opened.items() if src in sources}
    assert readers, f"no worker opened {src}: {opened}"
    assert readers <= ran_on


def _same_chunks_sync(eager, lazy):
    """*eager* (loaded numpy data) chunked exactly like the dask-backed *lazy*,
    so the same reduction tree can be run locally for comparison."""
    return eager.chunk(dict(lazy.chunks))


def test_workers_are_separate_processes(client):
    pids = client.run(os.getpid)
    assert len(pids) == 2
    assert os.getpid() not in pids.values()
    assert len(set(pids.values())) == 2


def test_message_dataset_reductions(client, source, source_data):
    src, options = source
    for message in (0, 3):
        lazy = xr.open_dataset(
            src, engine="tensogram", message_index=message, chunks={}, storage_options=options
        )
        eager = xr.open_dataset(src, engine="tensogram", message_index=message, storage_options=options).load()
        assert all(lazy[name].chunks is not None for name in ("2t", "u", "sp"))
        # One chunk per object.
        assert all(len(c) == 1 for c in lazy["u"].chunks)

        (loaded, sums, means, maxima), ran_on = _compute_on_workers(
            client,
            lazy,
            lazy.sum("longitude"),
            lazy.mean(),
            lazy.max("latitude"),
        )
        _assert_read_by_workers(client, _files.normalize_source(src), ran_on)

        for name in ("2t", "u", "sp"):
            np.testing.assert_array_equal(loaded[name].values, eager[name].values)
            np.testing.assert_array_equal(maxima[name].values, eager[name].max("latitude").values)
        reference = _same_chunks_sync(eager, lazy)
        np.testing.assert_array_equal(
            sums.to_array().values, reference.sum("longitude").compute(scheduler="sync").to_array().values
        )
        np.testing.assert_array_equal(
            means.to_array().values, reference.mean().compute(scheduler="sync").to_array().values
        )
        # The eager path itself against what was written.
        np.testing.assert_array_equal(eager["2t"].values, source_data["2t"][message])
        np.testing.assert_array_equal(eager["u"].values, source_data["u"][message])
        np.testing.assert_array_equal(eager["latitude"].values, source_data["lat"])
        # 16-bit simple packing quantises to steps of at most range / 2**15
        # (binary scale factor rounds the ideal range / (2**16 - 1) step up to
        # a power of two), and rounding errs by at most half a step.
        sp = source_data["sp"][message]
        step = (sp.max() - sp.min()) / 2**15
        np.testing.assert_allclose(eager["sp"].values, sp, rtol=0, atol=step / 2)


def test_stacked_datasets_reductions(client, source, source_data):
    src, options = source
    f32, f64 = tensogram_xarray.open_datasets(src, storage_options=options, chunks={})
    e32, e64 = (ds.load() for ds in tensogram_xarray.open_datasets(src, storage_options=options))
    assert f32["2t"].dims == ("mars.step", "latitude", "longitude")
    assert set(f64.data_vars) == {"u", "sp"}
    # One chunk per stored object: len(STEPS) chunks along the stacking axis.
    for variable in (f32["2t"], f64["u"], f64["sp"]):
        assert variable.chunks == ((1,) * len(STEPS), (NLAT,), (NLON,))

    days = ("mars.step", np.asarray(STEPS) // 24)
    window = {"latitude": slice(-30.0, 30.0), "longitude": slice(90.0, 180.0)}
    (
        (t_sum, t_mean, u_max, by_day, window_mean, loaded64),
        ran_on,
    ) = _compute_on_workers(
        client,
        f32["2t"].sum(("latitude", "longitude")),
        f32["2t"].mean("mars.step"),
        f64["u"].max(("mars.step", "longitude")),
        f64.assign_coords(day=days).groupby("day").mean(),
        f64["sp"].sel(window).mean(("latitude", "longitude")),
        f64,
    )
    # Six objects per variable: with two idle workers both take part.
    assert len(ran_on) == 2
    _assert_read_by_workers(client, _files.normalize_source(src), ran_on)

    np.testing.assert_array_equal(loaded64["u"].values, e64["u"].values)
    np.testing.assert_array_equal(loaded64["sp"].values, e64["sp"].values)
    np.testing.assert_array_equal(u_max.values, e64["u"].max(("mars.step", "longitude")).values)
    ref32 = _same_chunks_sync(e32, f32)
    ref64 = _same_chunks_sync(e64, f64)
    np.testing.assert_array_equal(
        t_sum.values, ref32["2t"].sum(("latitude", "longitude")).compute(scheduler="sync").values
    )
    np.testing.assert_array_equal(t_mean.values, ref32["2t"].mean("mars.step").compute(scheduler="sync").values)
    expected_by_day = ref64.assign_coords(day=days).groupby("day").mean().compute(scheduler="sync")
    xr.testing.assert_identical(by_day, expected_by_day)
    np.testing.assert_array_equal(
        window_mean.values, ref64["sp"].sel(window).mean(("latitude", "longitude")).compute(scheduler="sync").values
    )
    # And the stacked eager data is what was written (lossless pipelines).
    np.testing.assert_array_equal(e32["2t"].values, source_data["2t"])
    np.testing.assert_array_equal(e64["u"].values, source_data["u"])


def test_merge_objects_gives_one_chunk_per_object(client, source):
    src, options = source
    lazy = xr.open_dataset(src, engine="tensogram", merge_objects=True, chunks={}, storage_options=options)
    assert lazy["2t"].chunks == ((1,) * len(STEPS), (NLAT,), (NLON,))
    (total,), ran_on = _compute_on_workers(client, lazy["2t"].max())
    (eager,) = tensogram_xarray.open_datasets(src, storage_options=options)[:1]
    assert float(total) == float(eager["2t"].values.max())
    _assert_read_by_workers(client, _files.normalize_source(src), ran_on)


def test_every_worker_decodes_on_its_own(client, source):
    """Each worker in turn gets the pickled lazy variable in a task pinned to
    it, and decodes it there alone: every process opens the file itself and
    gets the numbers this process gets.  (A ``workers=`` restriction on
    ``client.compute`` pins only the output tasks, hence one task that does
    all the work.)"""
    src, options = source
    (lazy,) = [ds for ds in tensogram_xarray.open_datasets(src, storage_options=options, chunks={}) if "u" in ds]
    blob = pickle.dumps(lazy["u"])

    def decode_in_worker(pickled):
        import pickle

        import distributed

        variable = pickle.loads(pickled)
        total = variable.sum(("latitude", "longitude")).compute(scheduler="sync").values
        return distributed.get_worker().address, total

    expected = lazy["u"].sum(("latitude", "longitude")).compute(scheduler="sync").values
    for worker in sorted(_workers(client)):
        _forget_results(client)
        future = client.submit(decode_in_worker, blob, workers=[worker], allow_other_workers=False, pure=False)
        ran_on, total = future.result()
        del future  # let the scheduler forget it before the next round
        assert ran_on == worker
        opened = _sources_opened_by_workers(client)
        assert opened[worker] == [_files.normalize_source(src)]
        assert all(not sources for w, sources in opened.items() if w != worker)
        np.testing.assert_array_equal(total, expected)


def _payload_sample(source_data) -> bytes:
    """64 bytes of an uncompressed object's payload, as stored in the file."""
    return source_data["2t"][2].tobytes()[4096 : 4096 + 64]


def test_pickles_carry_no_payload(client, source, source_data, served_dir):
    src, options = source
    sample = _payload_sample(source_data)
    # The check below can fail: the sample is stored verbatim in the file.
    assert sample in (served_dir / FILE_NAME).read_bytes()
    object_bytes = source_data["2t"][0].nbytes

    message = xr.open_dataset(src, engine="tensogram", message_index=2, chunks={}, storage_options=options)
    (stacked,) = [ds for ds in tensogram_xarray.open_datasets(src, storage_options=options, chunks={}) if "2t" in ds]
    lazy_message = xr.open_dataset(src, engine="tensogram", message_index=2, storage_options=options)
    backend = lazy_message["2t"].variable._data
    while hasattr(backend, "array"):  # unwrap xarray's indexing adapters
        backend = backend.array
    assert isinstance(backend, tensogram_xarray.TensogramBackendArray)

    def pickled_pieces():
        graph_pickle = distributed.protocol.pickle.dumps
        return {
            "backend array": pickle.dumps(backend),
            "message graph": graph_pickle(dict(message["2t"].data.__dask_graph__())),
            "stacked graph": graph_pickle(dict(stacked["2t"].data.__dask_graph__())),
        }

    before = pickled_pieces()
    # Decoding on the workers (and locally) must not leave data behind in
    # the arrays either.
    client.compute([message["2t"].sum(), stacked["2t"].sum()], sync=True)
    np.asarray(lazy_message["2t"])
    after = pickled_pieces()
    for label, blob in list(before.items()) + list(after.items()):
        assert sample not in blob, f"{label} pickle holds payload bytes"
        assert len(blob) < 8192 < object_bytes, f"{label} pickles to {len(blob)} bytes"
    for label in before:
        assert len(after[label]) == len(before[label])
    clone = pickle.loads(before["backend array"])
    assert (clone.source, clone.msg_index, clone.obj_index) == (_files.normalize_source(src), 2, 2)
    assert clone.storage_options == options
    np.testing.assert_array_equal(clone.read((slice(None), slice(None))), source_data["2t"][2])


def _settled_log(server) -> list[str]:
    """The access log once it stops growing (nginx writes a request's line
    just after sending the reply, so it can trail the client briefly)."""
    lines = server.access_log()
    for _ in range(100):
        time.sleep(0.02)
        now = server.access_log()
        if len(now) == len(lines):
            return now
        lines = now
    return lines


def test_http_reads_are_range_requests(client, nginx, source_data):
    """Worker reads over HTTP are Range GETs, not whole-file downloads."""
    url = nginx.url(FILE_NAME)
    (stacked,) = [ds for ds in tensogram_xarray.open_datasets(url, chunks={}) if "2t" in ds]
    before = len(nginx.access_log())
    client.compute(stacked["2t"].max(), sync=True)
    lines = [line.split() for line in _settled_log(nginx)[before:]]
    gets = [fields for fields in lines if fields[0] == "GET" and fields[1] == f"/{FILE_NAME}"]
    assert gets, "workers sent no GET for the file"
    file_size = os.path.getsize(nginx.root / FILE_NAME)
    for fields in gets:
        assert fields[2].startswith('"bytes='), fields
        assert fields[3] == "206", fields
        assert int(fields[4]) < file_size
