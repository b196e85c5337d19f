"""TLS with client certificates through the Python client (certificates made by openssl)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import unittest

import grpc

from collide import Body, CollideError, Raycast, Sphere
from server_process import ServerProcess

OPENSSL = shutil.which("openssl") or "/usr/bin/openssl"


def make_certificates(directory: str) -> None:
    """Writes ca.pem, server.{pem,key} (for 127.0.0.1) and client.{pem,key} into `directory`."""
    def path(name: str) -> str:
        return os.path.join(directory, name)

    with open(path("server.ext"), "w", encoding="utf-8") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    with open(path("client.ext"), "w", encoding="utf-8") as f:
        f.write("extendedKeyUsage=clientAuth\n")
    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    steps = [[OPENSSL, "req", "-x509", *curve, "-keyout", path("ca.key"), "-out", path("ca.pem"),
              "-days", "2", "-subj", "/CN=collide python test CA"]]
    for who in ("server", "client"):
        steps.append([OPENSSL, "req", *curve, "-keyout", path(f"{who}.key"), "-out",
                      path(f"{who}.csr"), "-subj", f"/CN={who}"])
        steps.append([OPENSSL, "x509", "-req", "-in", path(f"{who}.csr"), "-CA", path("ca.pem"),
                      "-CAkey", path("ca.key"), "-CAcreateserial", "-out", path(f"{who}.pem"),
                      "-days", "2", "-extfile", path(f"{who}.ext")])
    for step in steps:
        subprocess.run(step, check=True, capture_output=True)


@unittest.skipUnless(os.access(OPENSSL, os.X_OK), "no openssl to make certificates")
class TlsTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        cls.certs = tempfile.mkdtemp(prefix="collide-py-certs-")
        make_certificates(cls.certs)
        cls.server = ServerProcess(extra_flags=[
            f"--tls_cert={cls.cert('server.pem')}", f"--tls_key={cls.cert('server.key')}",
            f"--tls_ca={cls.cert('ca.pem')}"])

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.close()
        shutil.rmtree(cls.certs, ignore_errors=True)

    @classmethod
    def cert(cls, name: str) -> str:
        return os.path.join(cls.certs, name)

    def test_a_client_with_a_certificate_reaches_the_server(self) -> None:
        with open(self.cert("ca.pem"), "rb") as f:
            ca = f.read()
        with self.server.client(root_certificates=ca,
                                client_certificate=self.cert("client.pem"),
                                client_key=self.cert("client.key")) as client:
            client.create_scene("tls")
            client.upsert_bodies("tls", [Body(1, Sphere(1))])
            hits = client.raycast("tls", Raycast((-5, 0, 0), (1, 0, 0), 10)).hits
            self.assertEqual([h.body_id for h in hits], [1])
            with client.update_writer("tls") as writer:
                self.assertEqual(writer.send(moves=([1], [0, 0, 0, 0, 0, 0, 1])).result(10)
                                 .version, 2)

    def test_clients_without_a_certificate_or_tls_are_refused(self) -> None:
        with self.server.client(root_certificates=self.cert("ca.pem"), timeout=5) as no_cert, \
                self.server.client(timeout=5) as plaintext:
            for client in (no_cert, plaintext):
                with self.assertRaises(CollideError) as refused:
                    client.list_scenes()
                self.assertEqual(refused.exception.code, grpc.StatusCode.UNAVAILABLE)


if __name__ == "__main__":
    unittest.main()
