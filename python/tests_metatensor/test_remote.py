"""Remote files: `safe_open("http://...")` fetches the header at open and each
tensor with a range request on its first read, through the library's
streaming client. A local HTTP server (Python's http.server, in a thread of
this process) counts the requests and bytes; since it needs the GIL to
answer, every test that completes also shows the GIL is released while the
client waits."""

from __future__ import annotations

import http.server
import json
import re
import threading

import numpy as np
import pytest
from conftest import write_safetensors
from test_records_blobs import SCHEMA, values

from tensogram import _metatensor
from tensogram import metatensor as mt


class _RangeServer(http.server.BaseHTTPRequestHandler):
    """One in-memory file, single-range GETs; records (start, length) of each reply."""

    body = b""
    log: list = []

    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):
        if self.path != "/model.safetensors":
            self.send_error(404)
            return
        spec = self.headers.get("Range", "")
        if not spec.startswith("bytes="):
            self.send_response(200)
            self.send_header("Content-Length", str(len(self.body)))
            type(self).log.append((0, len(self.body)))  # before the client can see the reply
            self.end_headers()
            self.wfile.write(self.body)
            return
        start, end = (int(v) for v in spec[6:].split("-"))
        part = self.body[start:end + 1]
        self.send_response(206)
        self.send_header("Content-Length", str(len(part)))
        self.send_header("Content-Range", f"bytes {start}-{start + len(part) - 1}/{len(self.body)}")
        self.send_header("Accept-Ranges", "bytes")
        type(self).log.append((start, len(part)))  # before the client can see the reply
        self.end_headers()
        self.wfile.write(part)


@pytest.fixture
def serve():
    servers = []

    def start(body: bytes):
        handler = type("H", (_RangeServer,), {"body": body, "log": []})
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}/model.safetensors", handler.log

    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def data_offset(image: bytes) -> int:
    return 8 + int.from_bytes(image[:8], "little")


def test_only_the_header_at_open_then_one_range_per_tensor(serve, rng):
    arrays = {"big": rng.standard_normal((256, 64)).astype(np.float32), "small": np.arange(5, dtype=np.int16)}
    image = mt.save(arrays, metadata={"who": "remote"})
    url, log = serve(image)
    with mt.safe_open(url, framework="np") as f:
        assert sum(n for _, n in log) == data_offset(image)  # bytes 0-7, then the header
        assert f.keys() == ["big", "small"] and f.metadata() == {"who": "remote"}
        assert f.get_slice("big").get_shape() == [256, 64]
        at_open = len(log)
        small = f.get_tensor("small")
        assert len(log) == at_open + 1 and log[-1][1] == small.nbytes
        assert np.array_equal(small, arrays["small"]) and not small.flags.writeable
        big = f.get_tensor("big")
        assert len(log) == at_open + 2 and log[-1][1] == big.nbytes
        assert np.array_equal(big, arrays["big"])
        f.get_tensor("big")
        f.get_slice("small")[1:3]
        assert len(log) == at_open + 2  # fetched once
    assert np.array_equal(big, arrays["big"])  # the image outlives the file
    sent = sum(n for _, n in log)
    assert sent == data_offset(image) + big.nbytes + small.nbytes  # no padding, nothing else


def test_records_and_blobs_fetch_index_and_heap(serve, rng):
    vals = values(rng)
    image = _metatensor.serialize_json(json.dumps(SCHEMA), json.dumps(vals), {})
    url, log = serve(image)
    with mt.safe_open(url, framework="np") as f:
        at_open = len(log)
        names = f.get_tensor("names")  # the index and the heap: two ranges
        assert len(log) == at_open + 2
        assert list(names) == vals["names"]
        recs = f.get_tensor("particles")  # no heap: one range
        assert len(log) == at_open + 3
        assert recs["id"].tolist() == [p["id"] for p in vals["particles"]]
        labels = f.get_blob_field("tagged", "label")
        assert list(labels) == [t["label"] for t in vals["tagged"]]
        rows = f.get_tensor("rows")
        assert [r.tolist() for r in rows] == vals["rows"]  # float32 values, exact


def test_plain_safetensors_file_and_load_file(serve, rng):
    a = rng.standard_normal(33)
    url, log = serve(write_safetensors({"odd": np.arange(3, dtype=np.uint8), "a": a}, {"m": "1"}))
    loaded = mt.load_file(url)
    assert sorted(loaded) == ["a", "odd"] and np.array_equal(loaded["a"], a)
    with mt.safe_open(url, framework="numpy") as f, pytest.raises(mt.TensorNotFoundError):
        f.get_tensor("absent")


def test_torch_tensors_over_the_remote_image(serve, rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((4, 4)).astype(np.float32)
    url, _ = serve(mt.save({"a": a}))
    with mt.safe_open(url, framework="pt") as f:
        t = f.get_tensor("a")
        assert isinstance(t, torch.Tensor) and np.array_equal(t.numpy(), a)
        t.add_(1)  # the image is this process's memory
        assert torch.equal(f.get_tensor("a"), t)


def test_threads_fetch_at_once(serve, rng):
    arrays = {f"t{i}": rng.standard_normal(1000 + i) for i in range(8)}
    url, log = serve(mt.save(arrays))
    wanted = [f"t{n % 8}" for n in range(16)]  # every tensor by two threads
    with mt.safe_open(url, framework="np") as f:
        at_open = len(log)
        out: dict = {}
        threads = [threading.Thread(target=lambda n=n: out.__setitem__(n, f.get_tensor(wanted[n])))
                   for n in range(len(wanted))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(log) - at_open == len(arrays)  # never the same tensor twice
        assert len({start for start, _ in log[at_open:]}) == len(arrays)
        for n, value in out.items():
            assert np.array_equal(value, arrays[wanted[n]])


def test_unreachable_missing_and_bad_urls(serve):
    with pytest.raises(ConnectionError) as excinfo:  # an OSError
        mt.safe_open("http://127.0.0.1:1/model.safetensors", framework="np")
    assert "127.0.0.1:1" in str(excinfo.value)
    url, _ = serve(mt.save({"a": np.zeros(2)}))
    with pytest.raises(FileNotFoundError, match="404"):
        mt.safe_open(url.replace("model", "absent"), framework="np")
    with pytest.raises(ValueError, match="scheme"):
        mt.load_file("ftp://example.invalid/x.safetensors")


def test_the_documentation_example(serve, capsys):
    from test_docs import DOC

    section = DOC.read_text().split("\n## Remote files\n")[1].split("\n## ")[0]
    [code] = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    url, log = serve(mt.save({"x": np.arange(3.0)}, metadata={"a": "b"}))
    exec(code.replace("https://example.org/model.safetensors", url), {})
    assert capsys.readouterr().out == "['x'] {'a': 'b'}\n"
    assert len(log) == 3  # bytes 0-7, the header, x
