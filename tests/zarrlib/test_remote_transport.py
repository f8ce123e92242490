"""The one remote transport over HTTP(S): obstore reads plain servers, follows their
redirects, checks their certificates and goes through the proxy the environment names; the truth is the numpy data zarr-python wrote and the
requests the loopback server logged."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from http_server import serve
from zarrview.zarrlib.storage.obstore_store import ObstoreStore

pytestmark = pytest.mark.timeout(60)


def test_a_redirect_is_followed(tmp_path: Path) -> None:
    """A store moved to another path answers 301 to its old one: obstore follows, and each
    chunk is read once from the new place."""
    data = np.arange(40 * 30, dtype="<u2").reshape(40, 30)
    zarr.create_array(tmp_path / "new.zarr", shape=data.shape, chunks=(20, 15), dtype="<u2")[...] = data
    with serve(tmp_path) as (url, state):
        state.faults.moved = {"/old.zarr/": "/new.zarr/"}
        arr = zl.open(f"{url}/old.zarr")
        assert isinstance(arr.reader.store, ObstoreStore)
        np.testing.assert_array_equal(arr[...], data)
        gets = [p for m, p, _ in state.requests("GET")]
        assert sorted(p for p in gets if p.startswith("/new.zarr/c/")) == sorted(
            f"/new.zarr/c/{i}/{j}" for i in range(2) for j in range(2))


def _certificates(tmp: Path) -> tuple[Path, Path, Path]:
    """A certificate authority of the test's own and a server certificate for 127.0.0.1 it
    signed: (the authority's certificate, the server's certificate, the server's key), as PEM."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "zarrview test authority")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
          .not_valid_after(now + datetime.timedelta(hours=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), True)
            .sign(ca_key, hashes.SHA256()))
    ca_path, cert_path, key_path = tmp / "ca.pem", tmp / "cert.pem", tmp / "key.pem"
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return ca_path, cert_path, key_path


def test_https_is_read_through_tls_and_an_untrusted_certificate_is_refused(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import ssl

    data = np.arange(96 * 80, dtype="<u2").reshape(96, 80)
    zarr.create_array(tmp_path / "a.zarr", shape=data.shape, chunks=(32, 32), dtype="<u2")[...] = data
    ca, cert, key = _certificates(tmp_path)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    with serve(tmp_path, tls=tls) as (url, state):
        assert url.startswith("https://")
        with pytest.raises(zl.StoreError, match=rf"{url}/a\.zarr.*TLS certificate is not trusted"):
            zl.open(f"{url}/a.zarr", io_retries=1)  # not trusted: refused, never read
        assert not state.requests()
    with serve(tmp_path, tls=tls) as (url, state):
        monkeypatch.setenv("SSL_CERT_FILE", str(ca))  # the authority trusted: its server is
        arr = zl.open(f"{url}/a.zarr")
        np.testing.assert_array_equal(arr[...], data)
        np.testing.assert_array_equal(arr[5:70, 33:34], data[5:70, 33:34])
        assert len(state.connections) <= 9, "TLS connections are kept alive too"


class _Proxy(ThreadingHTTPServer):
    """A forward proxy on loopback: each request (in absolute form) is fetched from its server
    without a proxy and relayed with its status, ranges and body; the URLs it relayed are kept."""

    daemon_threads = True

    def __init__(self) -> None:
        self.relayed: list[str] = []
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        relayed = self.relayed

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                relayed.append(self.path)
                request = urllib.request.Request(self.path, headers={
                    k: v for k, v in self.headers.items() if k.lower() in ("range", "user-agent", "accept")})
                try:
                    with direct.open(request, timeout=20) as answer:
                        status, headers, body = answer.status, answer.headers, answer.read()
                except urllib.error.HTTPError as e:
                    status, headers, body = e.code, e.headers, e.read()
                self.send_response(status)
                for name in ("Content-Type", "Content-Range", "ETag", "Accept-Ranges", "Last-Modified"):
                    if headers.get(name):
                        self.send_header(name, headers[name])
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        super().__init__(("127.0.0.1", 0), Handler)

    def __enter__(self) -> _Proxy:
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


def test_reads_go_through_the_proxy_the_environment_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``HTTP_PROXY`` sends every request of an ``http://`` store through the proxy (the values
    are zarr-python's, each chunk relayed once); ``NO_PROXY`` naming the server bypasses it."""
    data = np.arange(48 * 40, dtype="<u2").reshape(48, 40)
    zarr.create_array(tmp_path / "p.zarr", shape=data.shape, chunks=(24, 20), dtype="<u2")[...] = data
    with serve(tmp_path) as (url, state), _Proxy() as proxy:
        for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.server_address[1]}")
        monkeypatch.setenv("NO_PROXY", "example.invalid")
        arr = zl.open(f"{url}/p.zarr", io_concurrency=4)  # a store client made afresh: a new server
        assert isinstance(arr.reader.store, ObstoreStore)
        np.testing.assert_array_equal(arr[...], data)
        chunks = sorted(u for u in proxy.relayed if "/c/" in u)
        assert chunks == sorted(f"{url}/p.zarr/c/{i}/{j}" for i in range(2) for j in range(2))
        assert len(state.requests("GET")) == len(proxy.relayed)  # the server saw only what was relayed
    with serve(tmp_path) as (url, state), _Proxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.server_address[1]}")
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        np.testing.assert_array_equal(zl.open(f"{url}/p.zarr")[...], data)
        assert not proxy.relayed and state.requests("GET")
