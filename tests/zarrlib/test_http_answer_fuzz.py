"""The HTTP answer fuzzer (http_answer_fuzz) as a bounded sample, and proof that it can fail.

Each case mutates the answer the loopback server gives for one key of a store written by
zarr-python; the read must end with the values zarr-python wrote or a ZarrError naming the
store or key, in bounded time and memory, in a worker under an address-space limit. The deep
campaign is ``python -m tests.zarrlib.http_answer_fuzz --count 10000 --seed 1``. This file
checks that cases replay from their seed and index and allow lies no client can see only
where a checksum or the JSON parser sees them, that unmutated answers read back exactly, and
that the harness reports each kind of bad outcome (a fuzzer that cannot fail passes for the
wrong reason), that a fixed sample of mutated answers (150 cases) has no other outcome, and
that each cause of wrong values the deep campaign has found stays fixed.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from http_answer_fuzz import GOOD, OPS, Campaign, Seed, build_seeds, cases, generate, summary

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Seed]:
    return build_seeds(tmp_path_factory.mktemp("http-fuzz") / "seeds")


def test_cases_replay_from_their_seed_and_index(seeds: dict[str, Seed]) -> None:
    drawn = [generate(seeds, 7, i) for i in range(3000)]
    assert drawn[:50] == [generate(seeds, 7, i) for i in range(50)]
    assert all(json.loads(json.dumps(c)) == c for c in drawn[:50]), "a case is plain JSON"
    assert len({json.dumps(c, sort_keys=True) for c in drawn}) > 2900
    kinds = Counter(op["op"] for c in drawn for op in c["ops"])
    named = {"content_length_smaller": "content_length", "duplicate_length": "duplicate_length",
             "te_lie": "transfer_encoding", "gzip_unlabelled": "gzip_body", "truncate_adjust": "truncate",
             "extend_adjust": "extend"}
    assert {named.get(op, op) for op in OPS} <= set(kinds), "every op is drawn"
    # lies no client can see only where a checksum or the JSON parser sees them
    for c in drawn:
        for op in c["ops"]:
            if op["op"] in ("flip", "range_lie", "whole_lie"):
                assert c["role"] == "protected", c
            if op["op"] == "empty" or op.get("value") == "0" and op["op"] == "content_length":
                assert c["role"] == "meta", c


def test_unmutated_answers_read_back_exactly(seeds: dict[str, Seed], tmp_path: Path) -> None:
    """The baseline the checks stand on: through the hook, unmutated, every key of every seed
    reads as zarr-python wrote it, on both backends and in both ways of reading."""
    plain = [{"seed": 0, "index": i, "store": s.name, "key": key, "role": "-", "ranges": ranges, "times": None,
              "ops": [], "backend": backend, "mode": mode}
             for i, (s, key, ranges, backend, mode) in enumerate(
                 (s, key, ranges, backend, mode) for s in seeds.values() for key in ("zarr.json", s.chunks[-1])
                 for ranges in (("any", "suffix", "explicit") if s.sharded and key != "zarr.json" else ("any",))
                 for backend in ("fsspec", "obstore") for mode in ("raise", "failures"))]
    report = Campaign(tmp_path, seeds=seeds, keep=True, log=lambda _: None).run(plain)
    assert report.counts == {"ok": len(plain)}, "\n".join(summary(report, tmp_path))
    assert report.mutated == len(plain), "the hook met every case's key"


def test_harness_reports_every_bad_outcome(seeds: dict[str, Seed], tmp_path: Path) -> None:
    base = {"seed": 0, "index": 0, "store": "crc_zstd.zarr", "key": "c/0/0", "role": "protected", "ranges": "any",
            "times": None, "ops": [], "backend": "fsspec", "mode": "raise"}
    expected = {"silent": "silent_corruption", "exception": "other_exception", "hang": "hang", "memory": "memory"}
    campaign = Campaign(tmp_path, seeds=seeds, keep=True, log=lambda _: None, selftest=True, deadline=5.0)
    report = campaign.run([{**base, "index": i, "inject": kind} for i, kind in enumerate(expected)])
    got = {case["inject"]: res["category"] for case, res in report.results}
    assert got == expected, got
    assert len(report.defects) == len(expected)
    assert all(Path(d["dir"], "case.json").exists() for d in report.defects.values())
    assert len((tmp_path / "bad.jsonl").read_text().splitlines()) == len(expected)


def test_a_sample_of_mutated_answers_has_no_other_outcome(seeds: dict[str, Seed], tmp_path: Path) -> None:
    report = Campaign(tmp_path, seeds=seeds, log=lambda _: None).run(cases(seeds, 20240611, 150))
    assert report.cases == 150 and report.mutated >= 135
    assert report.bad == 0, "\n".join(summary(report, tmp_path))


#: the cases of ``--count 10000 --seed 1`` that read wrong values without an error, one for each
#: cause found (replay one with ``--replay 1:INDEX``)
WRONG_VALUES_FOUND = {
    # a 206 of other bytes than asked, its Content-Range saying which, read as the range asked
    722: "fsspec, 206 of other bytes, Content-Range saying so",
    # an answer aiohttp cannot parse (here "Content-Length: +612") reported as a 400, taken as
    # "suffix ranges refused"; the size then asked with fsspec's _info, which says "no such
    # file" for any failure: the shard read as fill values
    581: "fsspec, Content-Length +n on every answer for a shard",
    1800: "auto, broken chunked framing on every answer for a shard",
    # a Content-Encoding: deflate body handed over by obstore as sent, inner chunks cut from it
    535: "auto, a 206 deflate-encoded with Content-Encoding saying so",
    # a 405 reported by object_store as "not found": the chunk read as the fill value
    7109: "obstore, a 405 for a chunk",
}


@pytest.mark.parametrize("index", [pytest.param(i, id=f"1:{i} {what}") for i, what in WRONG_VALUES_FOUND.items()])
def test_causes_of_wrong_values_found_stay_fixed(index: int, seeds: dict[str, Seed], tmp_path: Path) -> None:
    report = Campaign(tmp_path, jobs=1, seeds=seeds, keep=True, log=lambda _: None).run([generate(seeds, 1, index)])
    (case, res), = report.results
    assert res["category"] in GOOD, f"{res['category']}: {res['why']} ({case})"
