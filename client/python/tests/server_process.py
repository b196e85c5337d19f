"""A real collide-server child process for the Python client's tests.

The server binary comes from $COLLIDE_SERVER (ctest sets it), its data lives in a temporary
directory, and it listens on 127.0.0.1 with port 0; the bound port is read from --port_file.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
from typing import List, Optional, Sequence

import collide


class ServerProcess:
    """Starts, stops and restarts collide-server on one data directory."""

    def __init__(self, token_file_contents: Optional[str] = None,
                 extra_flags: Sequence[str] = ()) -> None:
        self.binary = os.environ.get("COLLIDE_SERVER")
        if not self.binary or not os.access(self.binary, os.X_OK):
            raise RuntimeError("set COLLIDE_SERVER to the collide-server binary (ctest does)")
        self.dir = tempfile.mkdtemp(prefix="collide-py-")
        self.data_dir = os.path.join(self.dir, "data")
        self.flags: List[str] = [f"--data_dir={self.data_dir}", "--log_level=warn",
                                 *extra_flags]
        if token_file_contents is not None:
            token_file = os.path.join(self.dir, "tokens")
            with open(token_file, "w", encoding="utf-8") as f:
                f.write(token_file_contents)
            self.flags.append(f"--token_file={token_file}")
        self.port = 0
        self.process: Optional[subprocess.Popen] = None
        self._log = open(os.path.join(self.dir, "server.log"), "wb")
        self.start()

    @property
    def address(self) -> str:
        """127.0.0.1:<port> of the running server."""
        return f"127.0.0.1:{self.port}"

    def start(self, port: int = 0) -> None:
        """Starts the server on `port` (0: a free one) and waits until it serves."""
        port_file = os.path.join(self.dir, "port")
        if os.path.exists(port_file):
            os.remove(port_file)
        self.process = subprocess.Popen(
            [self.binary, f"--address=127.0.0.1:{port}", f"--port_file={port_file}",
             *self.flags],
            stdout=self._log, stderr=self._log)
        give_up = time.monotonic() + 20
        while not os.path.exists(port_file):
            if self.process.poll() is not None:
                raise RuntimeError(f"collide-server exited: {self.logs()}")
            if time.monotonic() > give_up:
                raise RuntimeError(f"collide-server did not serve in 20 s: {self.logs()}")
            time.sleep(0.02)
        with open(port_file, encoding="utf-8") as f:
            self.port = int(f.read().strip())

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Sends `sig` and waits for the exit; returns the exit status (negative: signal)."""
        assert self.process is not None
        self.process.send_signal(sig)
        try:
            return self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

    def restart_same_port(self) -> None:
        """Starts the server again on the port it had, on the same data directory."""
        give_up = time.monotonic() + 10
        while True:
            try:
                self.start(self.port)
                return
            except RuntimeError:
                # The port may linger briefly after a kill; try again.
                if time.monotonic() > give_up:
                    raise
                time.sleep(0.1)

    def client(self, token: Optional[str] = None, **options) -> collide.Client:
        """A client of this server."""
        return collide.Client(self.address, token=token, **options)

    def logs(self) -> str:
        """The server's output so far."""
        self._log.flush()
        with open(os.path.join(self.dir, "server.log"), encoding="utf-8",
                  errors="replace") as f:
            return f.read()

    def close(self) -> None:
        """Stops the server and removes its directory."""
        if self.process is not None and self.process.poll() is None:
            self.stop(signal.SIGTERM)
        self._log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class ServerTestCase(unittest.TestCase):
    """One server and one client of it for the class; each test uses its own scene."""

    server: ServerProcess
    client: collide.Client

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = ServerProcess()
        cls.client = cls.server.client()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.client.close()
        cls.server.close()
