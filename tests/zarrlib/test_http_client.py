"""zarrlib's own HTTP/1.1 client reads every answer a server may legally give, or hands over.

A scripted server on loopback answers each request with exactly the bytes a test gives it
(chunked bodies with extensions and trailers, bodies ended by closing, idle connections
closed under the client, redirects, garbage), and records every request and connection. The
truth is the bytes the script sent; where the client cannot read an answer the store must
still return the right bytes, through aiohttp.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from dataclasses import dataclass, field

import numpy as np
import pytest
import zarr

import zarrview.zarrlib as zl
from http_server import serve
from zarrview.zarrlib.storage.byte_request import ByteRequest
from zarrview.zarrlib.storage.location import open_store

pytestmark = pytest.mark.timeout(60)

#: (path, request head) -> the bytes to send back, and whether to close the connection after
Script = Callable[[str, str], tuple[bytes, bool]]


@dataclass
class Scripted:
    url: str
    requests: list[tuple[str, str]] = field(default_factory=list)  # (path, whole request head)
    connections: int = 0


@contextmanager
def scripted(script: Script) -> Iterator[Scripted]:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    record = Scripted(f"http://127.0.0.1:{listener.getsockname()[1]}")
    stop = threading.Event()

    def serve_one(conn: socket.socket) -> None:
        conn.settimeout(10)
        buf = b""
        with conn:
            while not stop.is_set():
                while b"\r\n\r\n" not in buf:
                    try:
                        got = conn.recv(65536)
                    except OSError:
                        return
                    if not got:
                        return
                    buf += got
                head, _, buf = buf.partition(b"\r\n\r\n")
                text = head.decode("latin-1")
                path = text.split(" ")[1]
                record.requests.append((path, text))
                answer, close = script(path, text)
                try:
                    conn.sendall(answer)
                except OSError:
                    return
                if close:
                    return

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            record.connections += 1
            threading.Thread(target=serve_one, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield record
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def ok(body: bytes, *headers: str, status: str = "200 OK") -> bytes:
    lines = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


PAYLOAD = bytes(range(256)) * 64  # 16 KiB, every byte value


def test_plain_urls_use_the_own_client_and_options_use_aiohttp(tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = np.arange(64 * 64, dtype="u2").reshape(64, 64)
    zarr.create_array(tmp_path / "a.zarr", shape=data.shape, chunks=(16, 16), dtype="u2")[...] = data
    with serve(tmp_path) as (url, state):
        plain = zl.open(f"{url}/a.zarr")
        assert plain.reader.store.client == "zarrlib"
        np.testing.assert_array_equal(plain[...], data)
        np.testing.assert_array_equal(plain[...], data)
        assert len(state.connections) <= 16, "connections are kept alive between requests"
        chunk_gets = [r for r in state.requests("GET") if "/c/" in r[1]]
        assert len(chunk_gets) == 2 * 16  # one request a chunk, each read
        assert zl.open(f"{url}/a.zarr", headers={"X-A": "b"}).reader.store.client == "aiohttp"


def test_ranges_and_whole_objects_come_back_exactly() -> None:
    def script(path: str, head: str) -> tuple[bytes, bool]:
        for line in head.split("\r\n"):
            if line.lower().startswith("range: bytes="):
                spec = line.split("=", 1)[1]
                a, b = spec.split("-")
                lo, hi = (len(PAYLOAD) + int(spec), len(PAYLOAD)) if not a else (int(a), int(b) + 1)
                return ok(PAYLOAD[lo:hi], f"Content-Range: bytes {lo}-{hi - 1}/{len(PAYLOAD)}",
                          status="206 Partial Content"), False
        return ok(PAYLOAD), False

    with scripted(script) as srv:
        store = open_store(srv.url)
        assert store.get("x") == PAYLOAD
        assert store.get_range(ByteRequest("x", 100, 5000)) == PAYLOAD[100:5000]
        assert store.get_range(ByteRequest("x", -300)) == PAYLOAD[-300:]
        assert srv.connections == 1, "one connection, kept alive"
        assert all("accept-encoding: identity" in h.lower() for _, h in srv.requests)


def test_chunked_bodies_with_extensions_and_trailers() -> None:
    pieces = [PAYLOAD[:1], PAYLOAD[1:7000], PAYLOAD[7000:]]

    def script(path: str, head: str) -> tuple[bytes, bool]:
        body = b"".join(b"%X;ext=1\r\n" % len(p) + p + b"\r\n" for p in pieces) + b"0\r\nX-Sum: 1\r\n\r\n"
        return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body, False

    with scripted(script) as srv:
        store = open_store(srv.url)
        for key in ("a", "b", "c"):  # the same connection after each chunked body
            assert store.get(key) == PAYLOAD
        assert srv.connections == 1


def test_bodies_that_end_with_the_connection() -> None:
    def script(path: str, head: str) -> tuple[bytes, bool]:
        return b"HTTP/1.0 200 OK\r\n\r\n" + PAYLOAD, True

    with scripted(script) as srv:
        store = open_store(srv.url)
        assert store.get("a") == PAYLOAD
        assert store.get("b") == PAYLOAD
        assert srv.connections == 2


def test_an_idle_connection_the_server_closed_costs_a_new_one_not_an_error() -> None:
    seen: list[str] = []

    def script(path: str, head: str) -> tuple[bytes, bool]:
        seen.append(path)
        if path.endswith("/b") and seen.count(path) == 1:
            return b"", True  # the kept connection is closed as the next request arrives
        return ok(PAYLOAD), False

    with scripted(script) as srv:
        store = open_store(srv.url, io_retries=1)  # no retry: the error would be final
        assert store.get("a") == PAYLOAD
        t0 = time.monotonic()
        assert store.get("b") == PAYLOAD
        assert time.monotonic() - t0 < 1.0
        assert srv.connections == 2
        assert [p for p, _ in srv.requests] == ["/a", "/b", "/b"]


def test_missing_objects_and_server_errors() -> None:
    def script(path: str, head: str) -> tuple[bytes, bool]:
        if path.endswith("/gone"):
            return ok(b"no", status="404 Not Found"), False
        return ok(b"busy", status="503 Service Unavailable"), False

    with scripted(script) as srv:
        store = open_store(srv.url, io_retries=2, io_timeout=5)
        assert store.get("gone") is None
        with pytest.raises(zl.StoreError, match=rf"{srv.url}/busy.*HTTP 503.*after 2 attempts"):
            store.get("busy")
        assert sum(p.endswith("/busy") for p, _ in srv.requests) == 2  # 503 is retried


@pytest.mark.parametrize("answer, message", [
    (b"SPDY/9 200 OK\r\n\r\n", "not an HTTP/1.x status line"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: lots\r\n\r\n", "is not a size"),
    (b"HTTP/1.1 200 OK\r\nX: " + b"y" * (80 << 10), "headers run past"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "not a chunk size"),
], ids=["status line", "length", "endless headers", "chunk size"])
def test_garbage_answers_are_errors_naming_the_key(answer: bytes, message: str) -> None:
    with scripted(lambda path, head: (answer, True)) as srv:
        store = open_store(srv.url, io_retries=1, io_timeout=5)
        with pytest.raises(zl.StoreError, match=rf"{srv.url}/k: .*{message}"):
            store.get("k")


def test_a_redirect_is_followed_through_aiohttp() -> None:
    def script(path: str, head: str) -> tuple[bytes, bool]:
        if path.startswith("/old/"):
            return ok(b"", "Location: /new/" + path[len("/old/"):], status="301 Moved Permanently"), False
        return ok(PAYLOAD), False

    with scripted(script) as srv:
        store = open_store(f"{srv.url}/old")
        assert store.get("x") == PAYLOAD
        assert store.client == "aiohttp"  # from the first answer it cannot read on
        assert store.get("y") == PAYLOAD
        assert [p for p, _ in srv.requests] == ["/old/x", "/old/x", "/new/x", "/old/y", "/new/y"]


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by its own key (cert, key), as PEM files."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def test_https_is_read_through_tls_and_an_untrusted_certificate_is_refused(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import ssl

    data = np.arange(96 * 80, dtype="<u2").reshape(96, 80)
    zarr.create_array(tmp_path / "a.zarr", shape=data.shape, chunks=(32, 32), dtype="<u2")[...] = data
    cert, key = _self_signed(tmp_path)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    with serve(tmp_path, tls=tls) as (url, state):
        assert url.startswith("https://")
        with pytest.raises(zl.StoreError, match=rf"{url}/a\.zarr.*CERTIFICATE_VERIFY_FAILED"):
            zl.open(f"{url}/a.zarr", io_retries=1)  # not trusted: refused, never read
        assert not state.requests()
    with serve(tmp_path, tls=tls) as (url, state):
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # trusted by the default context of a new origin
        arr = zl.open(f"{url}/a.zarr")
        assert arr.reader.store.client == "zarrlib"
        np.testing.assert_array_equal(arr[...], data)
        np.testing.assert_array_equal(arr[5:70, 33:34], data[5:70, 33:34])
        assert len(state.connections) <= 9, "TLS connections are kept alive too"


def test_a_kept_connection_the_server_closes_is_let_go() -> None:
    import asyncio

    from zarrview.zarrlib.storage.http_client import HttpClient

    closing = threading.Event()

    def script(path: str, head: str) -> tuple[bytes, bool]:
        return ok(PAYLOAD), closing.is_set()

    async def main(port: int) -> tuple[int, int]:
        client = HttpClient("127.0.0.1", port, False, f"127.0.0.1:{port}")

        def never(n: int | None, bound: int, status: int) -> Exception:
            return AssertionError("no bound is passed here")

        answers = await asyncio.gather(*(client.get(client.request(f"/{i}", None), lambda s: 1 << 20, never)
                                         for i in range(4)))
        assert all(bytes(a.body) == PAYLOAD for a in answers)
        kept = client.idle
        closing.set()
        await client.get(client.request("/last", None), lambda s: 1 << 20, never)  # answered, then hung up on
        for _ in range(100):
            if client.idle < kept:
                break
            await asyncio.sleep(0.01)
        return kept, client.idle

    with scripted(script) as srv:
        kept, left = asyncio.run(main(int(srv.url.rsplit(":", 1)[1])))
    assert kept == 4
    assert left == 3, "the connection the server closed is no longer kept"


def test_a_body_sent_gzip_encoded_anyway_is_decoded() -> None:
    import gzip

    def script(path: str, head: str) -> tuple[bytes, bool]:
        return ok(gzip.compress(PAYLOAD), "Content-Encoding: gzip"), False  # though identity was asked for

    with scripted(script) as srv:
        store = open_store(srv.url)
        assert store.get("a") == PAYLOAD
        assert store.client == "zarrlib" and len(srv.requests) == 1
