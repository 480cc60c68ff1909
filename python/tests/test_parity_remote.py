"""Spec 08 §3 storage_options / bidirectional and §3.4 AsyncTensogramFile.open_remote call-time
checks, against a small local HTTP server with range requests; §2/§1.8 remote iteration."""

import asyncio

import numpy as np
import pytest
from range_server import serve

import tensogram


@pytest.fixture
def server():
    msgs = [tensogram.encode({"base": [{"v": i}]}, [({"type": "ntensor", "shape": [3], "dtype": "float64"},
                                                     np.full(3, float(i)))]) for i in range(2)]
    with serve(b"".join(msgs)) as (url, handler):
        yield url, handler


# ---- §3.1 conversion ----------------------------------------------------------------------------

def test_storage_options_container_and_keys_are_checked():
    with pytest.raises(TypeError, match=r"^argument 'storage_options': 'list' object is not an instance of 'dict'$"):
        tensogram.TensogramFile.open_remote("http://127.0.0.1:1/x.tgm", [])
    with pytest.raises(TypeError, match=r"^'int' object is not an instance of 'str'$"):
        tensogram.TensogramFile.open_remote("http://127.0.0.1:1/x.tgm", {1: "x"})


def test_storage_options_value_must_be_convertible_to_str():
    class Unprintable:
        def __str__(self):
            raise RuntimeError("no")

    with pytest.raises(ValueError, match=r"^storage_options value for key 'timeout' must be convertible to string$"):
        tensogram.TensogramFile.open_remote("http://127.0.0.1:1/x.tgm", {"timeout": Unprintable()})


@pytest.mark.parametrize("value", [True, 0, np.int32(1), 1.5, None])
def test_bidirectional_accepts_only_bool(value, server):
    url, _ = server
    if isinstance(value, bool):
        assert len(tensogram.TensogramFile.open_remote(url, bidirectional=value)) == 2
        return
    with pytest.raises(TypeError) as e:
        tensogram.TensogramFile.open_remote(url, bidirectional=value)
    qualname = type(value).__qualname__
    expected = ("argument 'bidirectional': 'None' is not an instance of 'bool'" if value is None else
                f"argument 'bidirectional': '{qualname}' object is not an instance of 'bool'")
    assert str(e.value) == expected


def test_bidirectional_accepts_numpy_bool(server):
    url, _ = server
    assert len(tensogram.TensogramFile.open_remote(url, bidirectional=np.bool_(False))) == 2


# ---- §3.2 values, applied at open --------------------------------------------------------------

def test_client_keys_are_applied_case_insensitively(server):
    url, handler = server
    f = tensogram.TensogramFile.open_remote(url, {"USER_AGENT": "tgm-test/1", "timeout": "30s",
                                                  "connect_timeout": "1m 30s", "allow_http": True})
    assert len(f) == 2 and f[1].metadata["v"] == 1
    assert handler.seen_headers and all(h.get("User-Agent") == "tgm-test/1" for h in handler.seen_headers)


@pytest.mark.parametrize("key, value, kind", [
    ("timeout", 30, "Duration"),           # a Duration needs a unit
    ("connect_timeout", "5 parsecs", "Duration"),
    ("allow_http", "maybe", "boolean"),
    ("allow_invalid_certificates", 2, "boolean"),
    ("pool_max_idle_per_host", -1, "usize"),
    ("http2_max_frame_size", 2**32, "u32"),
    ("user_agent", "bad\nvalue", "HeaderValue"),
])
def test_malformed_values_fail_the_open(key, value, kind):
    url = "http://127.0.0.1:1/x.tgm"
    with pytest.raises(OSError) as e:
        tensogram.TensogramFile.open_remote(url, {key: value})
    assert type(e.value) is OSError
    assert str(e.value) == (f"RemoteError: cannot open '{url}': Generic Config error: failed to parse "
                            f"\"{value}\" as {kind}")


def test_url_errors_come_before_option_values():
    with pytest.raises(OSError, match=r"^RemoteError: invalid URL 'nope': relative URL without a base$"):
        tensogram.TensogramFile.open_remote("nope", {"timeout": "30"})


# ---- §3.4 AsyncTensogramFile.open_remote -------------------------------------------------------

def test_async_open_remote_needs_a_running_loop():
    with pytest.raises(RuntimeError, match=r"^no running event loop$"):
        tensogram.AsyncTensogramFile.open_remote("http://127.0.0.1:1/x.tgm")


def test_async_open_remote_checks_arguments_at_call_time_and_the_rest_on_await(server):
    url, _ = server

    async def run():
        for bad, exc in [(([], ), TypeError), (({1: "x"},), TypeError)]:
            with pytest.raises(exc):
                tensogram.AsyncTensogramFile.open_remote(url, *bad)       # raised by the call itself
        with pytest.raises(TypeError, match=r"^argument 'source': 'int' object is not an instance of 'str'$"):
            tensogram.AsyncTensogramFile.open_remote(1)
        with pytest.raises(TypeError, match="'bidirectional'"):
            tensogram.AsyncTensogramFile.open_remote(url, bidirectional=1)
        pending = tensogram.AsyncTensogramFile.open_remote("nope", {"timeout": "30"})
        assert isinstance(pending, asyncio.Future)                       # the URL error waits for the await
        with pytest.raises(OSError, match=r"^RemoteError: invalid URL 'nope'"):
            await pending
        af = await tensogram.AsyncTensogramFile.open_remote(url, {"timeout": "10s"})
        assert repr(af) == f"AsyncTensogramFile(source='{url}')"
        assert await af.message_count() == 2
        assert [m.metadata["v"] async for m in af] == [0, 1]

    asyncio.run(run())


# ---- §1.8 / §2 sync iteration of a remote file ----------------------------------------------------

def test_remote_files_cannot_be_iterated_synchronously(server):
    url, _ = server
    f = tensogram.TensogramFile.open(url)
    assert f.is_remote() and repr(f) == f"TensogramFile(source='{url}')"
    with pytest.raises(RuntimeError, match=r"^iteration not supported on remote files$"):
        iter(f)


# ---- §7.1/§7.2 what a remote open checks eagerly ---------------------------------------------------

@pytest.mark.parametrize("body, text", [
    (b"", "remote file too small (0 bytes)"),
    (b"TENSOGRM" + bytes(39), "remote file too small (47 bytes)"),
    (bytes(48), "no valid messages found in remote file"),
    (b"TENSOGRM\x00\x02" + bytes(42), "no valid messages found in remote file"),   # wire version 2
])
def test_remote_open_checks_size_and_first_preamble(body, text):
    with serve(body) as (url, _):
        for opener in (tensogram.TensogramFile.open_remote, tensogram.TensogramFile.open):
            with pytest.raises(OSError) as e:
                opener(url)
            assert str(e.value) == "RemoteError: " + text


def test_remote_open_reads_only_the_first_preamble(server):
    url, handler = server
    handler.seen_headers.clear()
    f = tensogram.TensogramFile.open_remote(url)
    ranges = [h.get("Range") for h in handler.seen_headers]
    assert ranges == [None, "bytes=0-23"]          # HEAD, then the first preamble
    assert len(f) == 2                             # the scan itself waits for first use


def test_missing_remote_object_fails_at_open(server):
    url, _ = server
    with pytest.raises(OSError, match=r"^RemoteError: .*404"):
        tensogram.TensogramFile.open_remote(url + ".missing")
