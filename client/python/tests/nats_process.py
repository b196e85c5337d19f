"""A real nats-server child process with JetStream for the Python client's replication tests.

The binary is Debian's nats-server (on PATH, else /usr/sbin; scripts/lib/setup.sh installs it).
It listens on 127.0.0.1 on a free port, read back from the ports file it writes in a temporary
directory, which also holds its store.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from typing import List, Optional

# Why a test needing nats-server is skipped where there is none.
NO_NATS_SERVER = ("nats-server is not installed (scripts/lib/setup.sh installs Debian's "
                  "nats-server); the replication tests need a real JetStream server")


def find_nats_server() -> Optional[str]:
    """The nats-server binary on PATH or in /usr/sbin; None when there is none."""
    found = shutil.which("nats-server")
    if found:
        return found
    debian = "/usr/sbin/nats-server"
    return debian if os.access(debian, os.X_OK) else None


def replication_flags(nats_url: str) -> List[str]:
    """collide-server's flags for replicated scenes on the NATS server at `nats_url`: one
    replica, and a short lease (600 ms) so that NATS stopped for a second or two makes it run
    out."""
    return [f"--nats_url={nats_url}", "--replication_replicas=1",
            "--replication_lease_ms=600", "--replication_publish_timeout_ms=1000"]


class NatsProcess:
    """Starts one nats-server with JetStream, stops and continues it (SIGSTOP, SIGCONT)."""

    def __init__(self, binary: str) -> None:
        self.dir = tempfile.mkdtemp(prefix="collide-py-nats-")
        self._log = open(os.path.join(self.dir, "nats.log"), "wb")
        self.process = subprocess.Popen(
            [binary, "-js", "-a", "127.0.0.1", "-p", "-1", "-m", "-1",
             "-sd", os.path.join(self.dir, "js"), "--ports_file_dir", self.dir],
            stdout=self._log, stderr=self._log)
        try:
            self.url = self._read_url()
        except BaseException:
            self.close()
            raise

    def _read_url(self) -> str:
        """nats://127.0.0.1:<port> from the ports file, once it is there and whole."""
        ports_file = os.path.join(self.dir, f"nats-server_{self.process.pid}.ports")
        give_up = time.monotonic() + 20
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"nats-server exited: {self.logs()}")
            try:
                with open(ports_file, encoding="utf-8") as f:
                    return json.load(f)["nats"][0]
            except (OSError, ValueError, KeyError, IndexError):
                # Not written yet, or half written.
                if time.monotonic() > give_up:
                    raise RuntimeError(f"nats-server wrote no ports file in 20 s: {self.logs()}")
                time.sleep(0.02)

    def stop(self) -> None:
        """SIGSTOP: the server stops answering, its connections stay open."""
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT: the server answers again."""
        self.process.send_signal(signal.SIGCONT)

    def logs(self) -> str:
        """The server's output so far."""
        self._log.flush()
        with open(os.path.join(self.dir, "nats.log"), encoding="utf-8", errors="replace") as f:
            return f.read()

    def close(self) -> None:
        """Kills the server (continued first, if stopped) and removes its directory."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.kill()
        self.process.wait()
        self._log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
