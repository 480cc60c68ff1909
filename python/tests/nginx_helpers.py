"""A throwaway nginx on loopback for Python tests that read over HTTP.

The same arrangement as the C++ remote tests (tests/io/nginx_server.hpp):
nginx serves a directory of static files, which gives HEAD and Range GETs
exactly as the remote reader needs them.  Each server has a private prefix
directory (config, pid file, logs, temp paths), listens on 127.0.0.1 on a
free port, and runs in the foreground as one process (`daemon off;
master_process off;`), so killing the process we started stops it all.
Where util-linux's ``setpriv`` exists nginx is started through it with a
parent-death signal, so it cannot outlive a test process that crashes.

Missing nginx skips the tests that need it, unless the environment sets
TENSOGRAM_REQUIRE_NGINX=1 (CI), where it fails them.  TENSOGRAM_NGINX may
name another nginx binary.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

# Variables the sanitizer build sets for the Python interpreter; nginx is not
# instrumented and must start without the preloaded ASan runtime.
_SANITIZER_ENV = ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS")


def nginx_binary() -> str:
    return os.environ.get("TENSOGRAM_NGINX") or "/usr/sbin/nginx"


def nginx_required() -> bool:
    return os.environ.get("TENSOGRAM_REQUIRE_NGINX") == "1"


def nginx_unavailable() -> str | None:
    """Why HTTP tests cannot run here, or None when they can."""
    binary = nginx_binary()
    if not os.access(binary, os.X_OK):
        return (
            f"nginx not found at {binary} (install nginx-light, or set TENSOGRAM_NGINX); "
            "the HTTP tests need a local server"
        )
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class NginxServer:
    """nginx serving *root* at ``http://127.0.0.1:<port>/``; *prefix* is an
    empty directory for its own files.  Use as a context manager."""

    def __init__(self, root: Path, prefix: Path):
        self.root = Path(root).resolve()
        self.prefix = Path(prefix).resolve()
        self.port = 0
        self._proc: subprocess.Popen | None = None

    def __enter__(self) -> "NginxServer":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name.lstrip('/')}"

    @property
    def access_log_path(self) -> Path:
        return self.prefix / "access.log"

    def access_log(self) -> list[str]:
        """One line per request: METHOD URI "RANGE" STATUS BYTES."""
        try:
            text = self.access_log_path.read_text()
        except FileNotFoundError:
            return []
        return [line for line in text.splitlines() if line]

    def error_log(self) -> str:
        path = self.prefix / "error.log"
        return path.read_text() if path.exists() else ""

    def _write_config(self) -> Path:
        p = self.prefix
        for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (p / sub).mkdir(exist_ok=True)
        conf = p / "nginx.conf"
        conf.write_text(
            "daemon off;\n"
            "master_process off;\n"
            "worker_processes 1;\n"
            f'pid "{p / "nginx.pid"}";\n'
            f'error_log "{p / "error.log"}" notice;\n'
            "events { worker_connections 1024; }\n"
            "http {\n"
            "  log_format counted '$request_method $uri \"$http_range\" $status $body_bytes_sent';\n"
            f'  access_log "{self.access_log_path}" counted;\n'
            # The compiled-in temp paths (/var/lib/nginx/...) need not be writable.
            f'  client_body_temp_path "{p / "body"}";\n'
            f'  proxy_temp_path "{p / "proxy"}";\n'
            f'  fastcgi_temp_path "{p / "fastcgi"}";\n'
            f'  uwsgi_temp_path "{p / "uwsgi"}";\n'
            f'  scgi_temp_path "{p / "scgi"}";\n'
            "  default_type application/octet-stream;\n"
            "  keepalive_requests 1000000;\n"
            "  keepalive_timeout 300s;\n"
            "  server {\n"
            f"    listen 127.0.0.1:{self.port};\n"
            f'    root "{self.root}";\n'
            "    location / { }\n"
            "  }\n"
            "}\n"
        )
        return conf

    def _launch(self) -> str | None:
        """Start nginx; None once it accepts connections, else the reason."""
        conf = self._write_config()
        command = [nginx_binary(), "-p", f"{self.prefix}/", "-c", str(conf), "-e", str(self.prefix / "error.log")]
        setpriv = shutil.which("setpriv")
        if setpriv:
            command = [setpriv, "--pdeathsig", "KILL", "--"] + command
        env = {k: v for k, v in os.environ.items() if k not in _SANITIZER_ENV}
        with open(self.prefix / "stderr.log", "ab") as out:
            self._proc = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env
            )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                code = self._proc.returncode
                self._proc = None
                stderr = (self.prefix / "stderr.log").read_text(errors="replace")
                return f"nginx exited with status {code}: {self.error_log()}{stderr}"
            if _accepts(self.port):
                return None
            time.sleep(0.01)
        self.stop()
        return f"nginx did not accept connections on port {self.port} within 10 s: {self.error_log()}"

    def start(self) -> None:
        failure = ""
        # The free port is released before nginx binds it, so another
        # process can take it in between: retry with a new one.
        for _attempt in range(8):
            self.port = _free_port()
            failure = self._launch() or ""
            if not failure:
                return
            if "Address already in use" not in failure:
                break
        raise RuntimeError(f"cannot start nginx: {failure}")

    def stop(self) -> None:
        if self._proc is None:
            return
        self._proc.kill()
        self._proc.wait(timeout=10)
        self._proc = None
