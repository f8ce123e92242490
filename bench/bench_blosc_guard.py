"""What checking a blosc frame before c-blosc reads it costs, against decoding it.

Why this exists
---------------
Every blosc chunk passes ``check_frame`` (codecs/blosc_frame.py) before c-blosc sees it:
the header's claims, the block starts, and for BloscLZ whether a stream could wrap a match
length. The check must cost a small share of the decode it guards. This measures both on
realistic 1 MiB chunks (512x512 float32 from a smooth field with noise, 1024x512 uint16
like a microscope tile, 1 MiB of sparse uint8 labels), for every shuffle and clevels 1, 5
and 9, BloscLZ and LZ4, and a whole 16 MiB BloscLZ block of about 10 MB compressed (the rare
case where the stream is long enough to be scanned).

Usage: ``python bench/bench_blosc_guard.py [--repeat N]``; prints one row per case: the
compressed size, the median µs of the check and of ``numcodecs.blosc.decompress`` into a
reused buffer, and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
from numcodecs import Blosc, blosc

from zarrview.zarrlib.codecs.blosc_frame import check_frame


def _chunks() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(42)
    y, x = np.mgrid[0:512, 0:512] / 64.0
    field = (np.sin(x) * np.cos(y) * 1000 + rng.normal(0, 3, (512, 512))).astype("f4")
    tile = (rng.poisson(np.exp(np.sin(np.mgrid[0:1024, 0:512][1] / 40.0) + 5))).astype("u2")
    labels = np.zeros(1 << 20, np.uint8)
    labels[rng.integers(0, labels.size, 20000)] = rng.integers(1, 255, 20000, dtype=np.uint8)
    return {"float32 field": field, "uint16 tile": tile, "uint8 labels": labels}


def _median_us(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def _row(name: str, frame: bytes, nbytes: int, repeat: int) -> float:
    out = np.empty(nbytes, np.uint8)
    check = _median_us(lambda: check_frame(frame), repeat)
    decode = _median_us(lambda: blosc.decompress(frame, out), repeat)
    print(f"{name:<40} {len(frame):>9} {check:>9.1f} {decode:>9.1f} {check / decode:>8.2%}")
    return check / decode


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=200)
    args = p.parse_args()
    blosc.use_threads = False
    print(f"{'case':<40} {'bytes':>9} {'check µs':>9} {'decode µs':>9} {'ratio':>8}")
    ratios = []
    for label, data in _chunks().items():
        for cname in ("blosclz", "lz4"):
            for shuffle in (0, 1, 2):
                for clevel in (1, 5, 9):
                    frame = bytes(Blosc(cname, clevel, shuffle).encode(data))
                    ratios.append(_row(f"{label} {cname} s{shuffle} c{clevel}", frame, data.nbytes, args.repeat))
    print(f"median ratio over 1 MiB chunks: {statistics.median(ratios):.2%}, largest {max(ratios):.2%}")
    rng = np.random.default_rng(8)
    words = rng.integers(0, 256, (1 << 20, 16), dtype=np.uint8)
    words[1::2] = words[0::2]
    big = bytes(Blosc("blosclz", 5, 0, 16 << 20).encode(words.reshape(-1).view("V32")))
    _row("16 MiB block, one 10 MB BloscLZ stream", big, words.nbytes, max(3, args.repeat // 20))


if __name__ == "__main__":
    main()
