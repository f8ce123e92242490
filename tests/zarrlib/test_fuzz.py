"""Fuzzing zarrlib with mutated stores written by zarr-python, as a bounded CI sample.

A corrupt or hostile store must cost a ZarrError naming the node or key: never another
exception, a hang, a crash, gigabytes of memory, a write to the store, a checksummed chunk read
wrong, or a read with ``failures=[]`` that raises for a bad chunk. The deep campaign is
``python -m tests.fuzz --count 20000 --seed 7`` (see tests/fuzz/__init__.py); this file runs a
fixed sample of it, and first proves that the harness sees each kind of bad outcome, since a
fuzzer that cannot fail passes for the wrong reason.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from pathlib import Path

import numcodecs
import pytest

from fuzz.apply import build, protection
from fuzz.campaign import Campaign, Options, generated, summary
from fuzz.payloads import bomb
from fuzz.seeds import SEEDS, Seed, build_seeds

REPO = Path(__file__).resolve().parents[2]
SAMPLE_SEED = 20240611
SAMPLE_COUNT = 700

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Seed]:
    return build_seeds(tmp_path_factory.mktemp("fuzz") / "seeds")


def _campaign(tmp_path: Path, seeds: dict[str, Seed], **options: object) -> Campaign:
    opts = Options(**options)  # type: ignore[arg-type]
    return Campaign(tmp_path, opts, seeds=seeds, keep_results=True, log=lambda _: None)


def test_every_seed_reads_back_exactly_what_zarr_python_wrote(seeds: dict[str, Seed], tmp_path: Path) -> None:
    """The baseline the checks stand on: unmodified seeds read without error and every array
    equals the truth (a seed that failed here would make every mutation of it look bad)."""
    zipped = [{"seed": name, "ops": [{"op": "zip", "method": method, "top": method == "stored"}]}
              for name in SEEDS for method in ("stored", "deflated")]
    report = _campaign(tmp_path, seeds).run([{"seed": name, "ops": []} for name in SEEDS] + zipped)
    assert report.counts == {"ok": 3 * len(SEEDS)}, "\n".join(summary(report, tmp_path))
    assert sum(len(s.arrays) for s in seeds.values()) >= 40


def test_harness_classifies_every_bad_outcome(seeds: dict[str, Seed], tmp_path: Path) -> None:
    """Faults injected through the worker's test-only hook land in the right category."""
    expected = {"exception": "other_exception", "hang": "hang", "busy": "hang", "crash": "crash",
                "memory": "memory", "kill": "memory", "write": "store_modified", "silent": "silent_corruption",
                "contract": "contract"}
    cases = [{"seed": "v3_crc", "ops": [], "inject": kind} for kind in expected]
    report = _campaign(tmp_path, seeds, selftest=True, timeout=3.0).run(cases)
    got = {case["inject"]: result for case, result in report.results}
    for kind, category in expected.items():
        assert category in {f["category"] for f in got[kind]["findings"]}, (kind, got[kind]["findings"])
    assert "maybe_inject" in got["hang"]["findings"][0]["where"]  # the stacks of a hung worker are read
    assert any("MemoryError" in f["type"] for f in got["memory"]["findings"])
    # each bad finding kept a reproducer, and the workers were replaced after each death
    assert all(Path(d.dir, "case.json").exists() and Path(d.dir, "store").is_dir() for d in report.defects.values())
    assert report.counts["ok"] == 0 and report.bad == len(expected)


def test_without_the_selftest_switch_the_hook_does_nothing(seeds: dict[str, Seed], tmp_path: Path) -> None:
    report = _campaign(tmp_path, seeds).run([{"seed": "v3_crc", "ops": [], "inject": "crash"}])
    assert report.counts == {"ok": 1}


def test_checksum_protection_is_claimed_only_where_crc32c_must_catch_it(seeds: dict[str, Seed]) -> None:
    crc, shard = seeds["v3_crc"], seeds["v3_shard_end_crc"]
    chunk, shard_key = crc.keys("chunk")[0], shard.keys("shard")[0]
    assert protection(crc, {"ops": [{"op": "flip", "key": chunk, "bits": [3]}]}) == ({"/a"}, set())
    assert protection(crc, {"ops": [{"op": "flip", "key": chunk, "bits": [3], "fix_crc": True}]})[0] == set()
    assert protection(crc, {"ops": [{"op": "swap", "key": chunk, "other": crc.keys("chunk")[1]}]})[0] == set()
    assert protection(shard, {"ops": [{"op": "index_set", "key": shard_key, "entry": 0, "field": 0, "value": 9}]})[0] \
        == {"/s"}
    assert protection(seeds["v3_plain"], {"ops": [{"op": "flip", "key": "a/c/1/1", "bits": [3]}]})[0] == set()
    assert protection(seeds["v3_misc"], {"ops": [{"op": "zero", "key": "bool/c/0"}]}) == (set(), {"/c8", "/scalar"})
    assert protection(crc, {"ops": [{"op": "json_del", "key": "a/zarr.json", "path": ["fill_value"]}]}) == (set(), set())


def test_bombs_are_real_and_cases_replay_byte_for_byte(seeds: dict[str, Seed], tmp_path: Path) -> None:
    assert zlib.decompress(bomb("gzip", (1 << 20) + 3), wbits=31) == bytes((1 << 20) + 3)
    assert zlib.decompress(bomb("zlib", 5 << 20)) == bytes(5 << 20)
    assert numcodecs.Zstd().decode(bomb("zstd", 300_000)) == bytes(300_000)
    assert len(bomb("gzip", (4 << 30) - 1)) < 8 << 20
    case = {"seed": "v3_shard_start_crc", "ops": [
        {"op": "inner_replace", "key": "s/c/0/0", "entry": 1, "payload": {"kind": "bomb", "codec": "zstd", "size": 99}},
        {"op": "json_set", "key": "s/zarr.json", "path": ["shape", 0], "text": "9" * 5000}]}
    a, b = tmp_path / "a", tmp_path / "b"
    assert build(seeds[case["seed"]], case, a) == build(seeds[case["seed"]], case, b) == [0, 1]
    assert all((a / k).read_bytes() == (b / k).read_bytes() for k in ("s/c/0/0", "s/zarr.json"))


def test_the_same_seed_generates_the_same_cases(seeds: dict[str, Seed]) -> None:
    first = [json.dumps(c) for c in generated(seeds, 40, seed=5)]
    assert first == [json.dumps(c) for c in generated(seeds, 40, seed=5)]
    assert first != [json.dumps(c) for c in generated(seeds, 40, seed=6)]
    assert len(set(first)) == 40


def test_bounded_sample_finds_no_bad_outcome(seeds: dict[str, Seed], tmp_path: Path) -> None:
    """A fixed sample of the campaign: every case must end ok or in ZarrErrors. On failure the
    message lists each distinct defect and the command that replays it."""
    campaign = _campaign(tmp_path, seeds)
    report = campaign.run(generated(seeds, SAMPLE_COUNT, SAMPLE_SEED))
    assert report.cases == SAMPLE_COUNT
    assert report.bad == 0, "\n".join(summary(report, tmp_path))
    assert report.counts["ok"] > 0 and report.counts["zarr_error"] > 0


def test_campaign_command_line_runs_and_reports(tmp_path: Path) -> None:
    """``python -m tests.fuzz`` works from the repository root (``tests`` is a namespace package)."""
    run = subprocess.run([sys.executable, "-m", "tests.fuzz", "--count", "6", "--seed", "3", "--jobs", "1",
                          "--out", str(tmp_path)], cwd=REPO, capture_output=True, text=True, timeout=100)
    assert "6 cases in" in run.stdout and "categories:" in run.stdout, run.stdout + run.stderr
    assert run.returncode in (0, 1)  # 1 would mean a defect: the sample test above reports it
    assert (tmp_path / "seeds" / "v3_plain" / "manifest.json").exists()
