"""A real ``redis-server`` on 127.0.0.1 for the tests: started on a free port, killed after.

``scripts/test.sh`` installs ``redis-server`` when it is missing; where it
cannot be installed the tests that need it are skipped, saying why.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    """One ``redis-server`` process without persistence; ``url`` to reach it."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("redis-server is not installed (scripts/test.sh installs it: apt-get install redis-server)")
        pytest.importorskip("redis", reason="the redis client is not installed (pip install -e '.[test]')")
        self.dir = tempfile.mkdtemp(prefix="detemplate-redis-")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.proc = subprocess.Popen([*args, "--dir", self.dir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._wait()

    def _wait(self) -> None:
        import redis

        client = redis.Redis.from_url(self.url, socket_timeout=1)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                client.close()
                return
            except redis.ConnectionError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    pytest.skip("redis-server did not start")
                time.sleep(0.05)

    def client(self):  # type: ignore[no-untyped-def]
        import redis

        return redis.Redis.from_url(self.url, socket_timeout=2)

    def flush(self) -> None:
        client = self.client()
        client.flushall()
        client.close()

    def kill(self) -> None:
        """Kill the server now (SIGKILL): no goodbye to the clients."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        shutil.rmtree(Path(self.dir), ignore_errors=True)
