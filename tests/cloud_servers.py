"""S3 (moto) and GCS (gcp-storage-emulator) servers on 127.0.0.1, for every test that reads a bucket.

Started here once, in one way, so the S3/GCS tests and the store contract talk to the same
kind of server: bound to the loopback address on a free port, in daemon threads, stopped on
exit, with test credentials set only while the S3 server runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

S3_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                  "AWS_DEFAULT_REGION": "us-east-1"}


@contextmanager
def moto_s3() -> Iterator[str]:
    """An S3-compatible server, empty; yields its endpoint URL. Needs ``moto[server]``.

    moto keeps its buckets in the process, not in the server: a server started after another
    would see the buckets and objects written through the first, so each one starts reset."""
    from urllib.request import ProxyHandler, Request, build_opener

    from moto.server import ThreadedMotoServer

    saved = {k: os.environ.get(k) for k in S3_CREDENTIALS}
    os.environ.update(S3_CREDENTIALS)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        reset = Request(f"http://{host}:{port}/moto-api/reset", method="POST")
        build_opener(ProxyHandler({})).open(reset, timeout=30).close()  # loopback: never a proxy
        yield f"http://{host}:{port}"
    finally:
        server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextmanager
def gcs_emulator(bucket: str) -> Iterator[str]:
    """A GCS JSON-API emulator holding ``bucket``, in memory; yields its endpoint URL."""
    from gcp_storage_emulator.server import Server

    server = Server("127.0.0.1", 0, in_memory=True, default_bucket=bucket)
    server._api.daemon = True  # never outlive the tests, whatever happens
    server.start()
    try:
        yield f"http://127.0.0.1:{server._api._httpd.server_address[1]}"
    finally:
        server.stop()
