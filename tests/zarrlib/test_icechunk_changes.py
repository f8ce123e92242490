"""``zarrview changes``: the changes between two versions of an Icechunk repository, checked
against icechunk 2.3's own ``Repository.diff``.

The writer (``icechunk_writer.py``, in the Python 3.12 oracle venv) records, for every ordered
pair of versions (branches, tags, snapshots) of a spec 2 and a spec 1 repository, icechunk's
diff or the error it refuses the pair with. Where it answers, ours must be the same, through
the library and through ``--json``. Where it refuses, ours goes through the newest common
ancestor; the writer builds that answer from what icechunk itself decodes (its ancestry,
``inspect_snapshot``, ``inspect_transaction_log``), having checked that the same construction
gives icechunk's diff on every pair icechunk answers. A repository that went through snapshot
expiration is checked against the same history kept whole. Every pair is read from copies of
the repositories without their ``chunks/`` and ``manifests/``: a diff reads neither.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from icechunk_repos import repositories
import zarrview.zarrlib as zl
from zarrview.cli import main as cli_main
from zarrview.zarrlib.icechunk import (DifferentRepositoriesError, TransactionLogNotFoundError, VersionDiff,
                                       VersionNotFoundError, diff_versions)
from zarrview.zarrlib.icechunk.diff import ANCESTOR, DESCENDANT, DIVERGED, SAME

#: the first test may build the 3.12 venv (an install from PyPI) and runs the writer
pytestmark = pytest.mark.timeout(600)

REPOS = ("repo2.icechunk", "repo1.icechunk")
REFUSED = "ancestry doesn't include"


@pytest.fixture(scope="module")
def fixture(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    doc = repositories(tmp_path_factory)
    stripped = tmp_path_factory.mktemp("without-chunks")
    for name in doc["changes"]:
        shutil.copytree(doc["root"] / name, stripped / name, ignore=shutil.ignore_patterns("chunks", "manifests"))
    doc["stripped"] = stripped
    return doc


def _pairs(fixture: dict[str, Any], repo: str) -> list[dict[str, Any]]:
    pairs: list[dict[str, Any]] = fixture["changes"][repo]["pairs"]
    return pairs


def _truth(entry: dict[str, Any]) -> dict[str, Any]:
    """icechunk's diff where it answers, else the answer built from what icechunk decodes."""
    found: dict[str, Any] = entry["icechunk"] if "icechunk" in entry else entry["model"]
    return found


def _cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    assert cli_main(["changes", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("repo", REPOS)
def test_every_pair_is_icechunks_diff(fixture: dict[str, Any], repo: str, capsys: pytest.CaptureFixture[str]) -> None:
    location = fixture["stripped"] / repo
    assert not (location / "chunks").exists() and not (location / "manifests").exists()
    pairs = _pairs(fixture, repo)
    answered = [e for e in pairs if "icechunk" in e]
    assert len(pairs) == len(fixture["changes"][repo]["versions"]) ** 2 and answered and len(answered) < len(pairs)
    # the history makes every kind of change icechunk reports (moves need spec 2)
    for name in VersionDiff.FIELDS:
        if name != "moved_nodes" or repo == "repo2.icechunk":
            assert any(e["icechunk"][name] for e in answered), name
    for entry in pairs:
        a, b = f"{location}@{entry['from']}", f"{location}@{entry['to']}"
        ours = diff_versions(a, b)
        what = (repo, entry["from"], entry["to"])
        assert ours.as_json() == _truth(entry), what
        assert list(ours.as_json()) == list(_truth(entry)), what  # icechunk's field names, in its order
        assert ours.relation == entry["relation"] and ours.base_snapshot == entry["base"], what
        assert (ours.relation == ANCESTOR) == ("icechunk" in entry), what
        if "icechunk" not in entry:
            assert REFUSED in entry["error"], entry["error"]
        assert _cli_json(capsys, a, b) == _truth(entry), what


def test_same_version_twice_has_no_changes(fixture: dict[str, Any]) -> None:
    """icechunk refuses a snapshot against itself; it has no changes."""
    location = fixture["root"] / "repo2.icechunk"
    same = [e for e in _pairs(fixture, "repo2.icechunk") if e["from"] == e["to"]]
    assert same and all(REFUSED in e["error"] for e in same)
    ours = diff_versions(f"{location}@tag.latest", f"{location}@branch.main")  # one snapshot, two names
    assert ours.relation == SAME and ours.is_empty()


def test_expired_history_is_the_history_kept_whole(fixture: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """After expiration re-parents commits onto the first snapshot, each carries the removed
    commits' transaction logs: icechunk's diff replays them, and so does ours; pairs that
    expiration made diverge still answer what the whole history answers."""
    location = fixture["stripped"] / "expired2.icechunk"
    pairs = _pairs(fixture, "expired2.icechunk")
    by_pair = {(e["from"], e["to"]): e for e in pairs}
    assert "icechunk" in by_pair[("1CECHNKREP0F1RSTCMT0", "branch.main")]
    assert REFUSED in by_pair[("tag.t1", "branch.main")]["error"]  # an ancestor until expiration re-parented both
    for entry in pairs:
        ours = diff_versions(f"{location}@{entry['from']}", f"{location}@{entry['to']}")
        if "icechunk" in entry:
            assert ours.as_json() == entry["icechunk"], (entry["from"], entry["to"])
        assert ours.as_json() == entry["twin"], (entry["from"], entry["to"])
        assert not ours.missing_logs
    gc = fixture["changes"]["expired2.icechunk"]["gc"]
    gone = fixture["root"] / "expired2-gc.icechunk"
    ours = diff_versions(f"{gone}@{gc['from']}", f"{gone}@{gc['to']}")
    assert ours.as_json() == gc["icechunk"] and ours.missing_logs == (gc["deleted"],)
    assert cli_main(["changes", f"{gone}@{gc['from']}", "@branch.main"]) == 0
    assert gc["deleted"] in capsys.readouterr().out


@pytest.mark.parametrize("repo", REPOS)
def test_text_names_every_change(fixture: dict[str, Any], repo: str, capsys: pytest.CaptureFixture[str]) -> None:
    from zarrview.viewing.versions import LISTED_CHUNKS, SECTIONS

    location = fixture["root"] / repo
    pairs = {(e["from"], e["to"]): e for e in _pairs(fixture, repo)}
    for a, b in (("tag.v1", "branch.edits"), ("branch.main", "branch.edits"), ("branch.edits", "tag.v1"),
                 ("tag.v2", "tag.v2")):
        entry = pairs[(a, b)]
        truth = _truth(entry)
        assert cli_main(["changes", f"{location}@{a}", f"@{b}"]) == 0
        text = capsys.readouterr().out
        lines = text.splitlines()
        assert f"@{a} (snapshot {fixture['changes'][repo]['versions'][a]})" in lines[0]
        for name, title in SECTIONS:
            if truth[name]:
                at = lines.index(f"{title}: {len(truth[name])}")
                assert lines[at + 1:at + 1 + len(truth[name])] == [f"  {p}" for p in truth[name]], (a, b, name)
            else:
                assert not any(line.startswith(f"{title}:") for line in lines)
        for path, chunks in truth["updated_chunks"].items():
            line = next(line for line in lines if line.startswith(f"  {path}: {len(chunks)} chunk"))
            shown = " ".join("(" + ", ".join(str(i) for i in c) + ")" for c in chunks)
            assert line.endswith(shown) == (len(chunks) <= LISTED_CHUNKS), line
        if entry["relation"] == DIVERGED:
            assert f"diverged after snapshot {entry['base']}" in text and "refuses" in text
        if entry["relation"] == DESCENDANT:
            assert f"@{b} is older than" in text and "undone" in text
        assert ("no changes" in text) == (not any(truth.values()))
        if (a, b) == ("tag.v2", "tag.v2"):
            assert "no changes" in text and "same snapshot" in text
    if repo == "repo2.icechunk":
        assert cli_main(["changes", f"{location}@tag.v1", f"{location}@branch.moved"]) == 0
        text = capsys.readouterr().out
        for source, target in pairs[("tag.v1", "branch.moved")]["icechunk"]["moved_nodes"]:
            assert f"  {source} -> {target}" in text


def test_many_chunks_are_counted_not_listed(fixture: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    from zarrview.viewing.versions import LISTED_CHUNKS

    location = fixture["root"] / "repo2.icechunk"
    truth = next(e for e in _pairs(fixture, "repo2.icechunk") if (e["from"], e["to"]) == ("tag.v1", "tag.latest"))
    many = {p: c for p, c in truth["icechunk"]["updated_chunks"].items() if len(c) > LISTED_CHUNKS}
    assert many  # the virtual array of 40 chunks
    assert cli_main(["changes", f"{location}@tag.v1", "@tag.latest"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for path, chunks in many.items():
        assert f"  {path}: {len(chunks)} chunks" in lines


# -- errors: each a ZarrError naming the repository, the version or the file ---------------------
def test_missing_versions_are_named(fixture: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    for repo in REPOS:
        location = fixture["root"] / repo
        with pytest.raises(VersionNotFoundError, match=rf"{location}: no tag named 'nope'.*tag\.v1"):
            diff_versions(f"{location}@tag.v1", f"{location}@tag.nope")
        with pytest.raises(VersionNotFoundError, match="no branch named 'gone'"):
            diff_versions(f"{location}@branch.gone", "@tag.v1")
        with pytest.raises(zl.StoreError, match="snapshot 0000000000000000000G does not exist"):
            diff_versions(f"{location}@tag.v1", "@0000000000000000000G")
        assert cli_main(["changes", f"{location}@tag.v1", "@tag.nope"]) == 1
        err = capsys.readouterr().err
        assert err.startswith("zarrview: ") and "no tag named 'nope'" in err and err.count("\n") == 1
    with pytest.raises(zl.StoreError, match="names no version"):
        diff_versions(f"{fixture['root'] / 'repo2.icechunk'}", "@nope")
    with pytest.raises(zl.StoreNotFoundError, match="not an Icechunk repository"):
        diff_versions(f"{fixture['root']}@branch.main", "@branch.main")


def test_two_repositories_are_refused(fixture: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    two, one = fixture["root"] / "repo2.icechunk", fixture["root"] / "repo1.icechunk"
    with pytest.raises(DifferentRepositoriesError, match=f"{two} and {one} are two repositories"):
        diff_versions(f"{two}@tag.v1", f"{one}@tag.v1")
    assert cli_main(["changes", f"{two}@tag.v1", f"{one}@tag.v2", "--json"]) == 1
    captured = capsys.readouterr()
    assert not captured.out and "two repositories" in captured.err and captured.err.count("\n") == 1
    # one repository, spelled two ways
    same = diff_versions(f"{two}@tag.v1", f"{two}/../{two.name}@tag.v2")
    assert same.relation == ANCESTOR
    with pytest.raises(zl.StoreError, match="leave out the node path"):
        diff_versions(f"{two}@tag.v1::/a", "@tag.v2")


def _copy(fixture: dict[str, Any], tmp_path: Path, repo: str = "repo2.icechunk") -> Path:
    dst = tmp_path / repo
    shutil.copytree(fixture["root"] / repo, dst)
    return dst


def _edits(fixture: dict[str, Any], repo: str) -> list[str]:
    """The snapshots of branch edits after tag v1, newest first."""
    ancestry = fixture["repos"][repo]["ancestry"]["branch.edits"]
    v1 = fixture["repos"][repo]["tags"]["v1"]
    ids = [a[0] for a in ancestry]
    return ids[:ids.index(v1)]


def _flatbuffer(path: Path) -> tuple[bytes, bytes]:
    from numcodecs import Zstd

    data = path.read_bytes()
    return data[:39], Zstd().decode(data[39:])


def _rewrite(path: Path, header: bytes, buf: bytes) -> None:
    from numcodecs import Zstd

    path.write_bytes(header + Zstd(level=1).encode(buf))


@pytest.mark.parametrize("repo", REPOS)
def test_broken_transaction_logs_are_named(fixture: dict[str, Any], tmp_path: Path, repo: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    location = _copy(fixture, tmp_path, repo)
    middle = _edits(fixture, repo)[1]
    log = location / "transactions" / middle
    key = f"transactions/{middle}"
    original = log.read_bytes()

    def refused(message: str, error: type[zl.ZarrError] = zl.ZarrError) -> None:
        with pytest.raises(error, match=message) as e:
            diff_versions(f"{location}@tag.v1", "@branch.edits")
        assert key in str(e.value), str(e.value)
        assert cli_main(["changes", f"{location}@tag.v1", "@branch.edits"]) == 1
        err = capsys.readouterr().err
        assert key in err and err.count("\n") == 1

    log.write_bytes(b"NOT" + original[3:])
    refused("no ICE🧊CHUNK magic")
    log.write_bytes(original[:-20])
    refused("cannot decompress")
    shutil.copy(location / "snapshots" / middle, log)
    refused("a snapshot file where a transaction_log was expected")
    header, buf = _flatbuffer(location / "transactions" / _edits(fixture, repo)[0])
    _rewrite(log, header, buf)  # the log of another commit
    refused(f"the transaction log is that of snapshot {_edits(fixture, repo)[0]}, not of {middle}")
    header, buf = _flatbuffer(Path(str(log)).with_name(_edits(fixture, repo)[2]))
    _rewrite(log, header, buf[:12])
    refused("corrupt flatbuffer")
    log.unlink()
    refused(f"the transaction log of snapshot {middle} does not exist", TransactionLogNotFoundError)
    # pairs that need no log of that commit still answer
    log_free = diff_versions(f"{location}@{middle}", "@branch.edits")
    assert log_free.relation == ANCESTOR


def test_mutated_transaction_logs_cost_a_zarr_error(fixture: dict[str, Any], tmp_path: Path) -> None:
    """Bytes of a decompressed log changed at random: a diff fails, if at all, with a ZarrError."""
    location = _copy(fixture, tmp_path)
    newest = _edits(fixture, "repo2.icechunk")[0]
    log = location / "transactions" / newest
    header, buf = _flatbuffer(log)
    rng = random.Random(7)
    for _ in range(60):
        mutated = bytearray(buf)
        for _ in range(rng.choice((1, 2, 8))):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        _rewrite(log, header, bytes(mutated))
        try:
            diff_versions(f"{location}@tag.v1", "@branch.edits")
        except zl.ZarrError:
            pass


@pytest.mark.parametrize("repo", REPOS)
def test_broken_snapshots_are_named(fixture: dict[str, Any], tmp_path: Path, repo: str) -> None:
    location = _copy(fixture, tmp_path, repo)
    newest = _edits(fixture, repo)[0]
    snapshot = location / "snapshots" / newest
    snapshot.write_bytes(snapshot.read_bytes()[:60])
    with pytest.raises(zl.ZarrError, match="cannot decompress") as e:
        diff_versions(f"{location}@tag.v1", "@branch.edits")
    assert f"snapshots/{newest}" in str(e.value)
    if repo == "repo1.icechunk":  # spec 1 finds parents in the snapshots: one on the way is read too
        middle = _edits(fixture, repo)[1]
        (location / "snapshots" / middle).unlink()
        shutil.copy(fixture["root"] / repo / "snapshots" / newest, snapshot)
        with pytest.raises(zl.StoreError, match=f"snapshots/{middle}: snapshot {middle} does not exist"):
            diff_versions(f"{location}@tag.v1", "@branch.edits")


@pytest.mark.parametrize("repo", REPOS)
def test_over_http_only_metadata_is_read(fixture: dict[str, Any], repo: str) -> None:
    """A server that cannot list: spec 1 finds each ref by its name. Only the repo file or refs,
    snapshots and transaction logs are asked for."""
    from http_server import serve

    pairs = {(e["from"], e["to"]): e for e in _pairs(fixture, repo)}
    with serve(fixture["root"]) as (url, state):
        for a, b in (("tag.v1", "branch.edits"), ("branch.dev", "tag.v2")):
            ours = diff_versions(f"{url}/{repo}@{a}", f"@{b}")
            assert ours.as_json() == _truth(pairs[(a, b)]), (a, b)
        asked = {p.split("/")[2] for _, p, _ in state.requests()}
        assert asked <= {"repo", "refs", "snapshots", "transactions"}, asked
