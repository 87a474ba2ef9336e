"""The data layer: lookup order, sha256 refusal, clear errors, downloads into the cache."""

from __future__ import annotations

import hashlib
import shutil

import pytest

from repro.cli import main
from repro.core.data import store as F

DATASET, FILE = "uci_monks", "monks-1.train"


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def original():
    """The verified mirror copy, resolved before any test hides the mirror."""
    return F.fetch(DATASET, FILE)


@pytest.fixture
def no_shared(tmp_path, monkeypatch):
    """Run from a folder outside any checkout, so there is no shared mirror."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FEDREPRO_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("FEDREPRO_DATA", raising=False)
    return tmp_path


def test_manifest_matches_shared_manifest():
    recs = F.manifest()
    assert len(recs) == 522
    assert recs[("adult", "adult.data")].sha256 == (
        "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d")
    assert recs[("adult", "adult.data")].bytes == 3_974_305
    assert sum(not r.pristine for r in recs.values()) == 63


def test_lookup_prefers_fedrepro_data(tmp_path, monkeypatch):
    src = F.locate(F.record(DATASET, FILE))
    mirror = tmp_path / "mirror"
    (mirror / DATASET).mkdir(parents=True)
    shutil.copyfile(src, mirror / DATASET / FILE)
    monkeypatch.setenv("FEDREPRO_DATA", str(mirror))
    assert F.fetch(DATASET, FILE) == mirror / DATASET / FILE
    assert [label for label, _ in F.search_roots()][0] == "$FEDREPRO_DATA"


def test_corrupt_copy_is_refused_with_both_hashes(tmp_path, monkeypatch, capsys):
    rec = F.record(DATASET, FILE)
    mirror = tmp_path / "mirror"
    (mirror / DATASET).mkdir(parents=True)
    bad = mirror / DATASET / FILE
    data = bytearray(F.locate(rec).read_bytes())
    data[10] ^= 0x01
    bad.write_bytes(bytes(data))
    monkeypatch.setenv("FEDREPRO_DATA", str(mirror))
    with pytest.raises(F.DataFileCorrupt) as info:
        F.fetch(DATASET, FILE)
    msg = str(info.value)
    assert rec.sha256 in msg and _sha(bad) in msg and _sha(bad) != rec.sha256
    assert main(["data", "verify", DATASET]) == 1
    out = capsys.readouterr()
    assert "1 corrupt" in out.out and "CORRUPT: uci_monks/monks-1.train" in out.err


def test_missing_file_names_every_place_looked(no_shared, monkeypatch):
    monkeypatch.setenv("FEDREPRO_DATA", str(no_shared / "mirror"))
    monkeypatch.setenv("FEDREPRO_OFFLINE", "1")
    with pytest.raises(F.DataFileMissing) as info:
        F.fetch(DATASET, FILE)
    msg = str(info.value)
    assert str(no_shared / "mirror" / DATASET / FILE) in msg
    assert str(no_shared / "cache" / DATASET / FILE) in msg
    assert F.record(DATASET, FILE).url in msg
    assert msg.count("  - ") == 2  # $FEDREPRO_DATA and the cache; no shared mirror here


def test_missing_file_lists_shared_mirror_too(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDREPRO_DATA", str(tmp_path / "m"))
    monkeypatch.setenv("FEDREPRO_CACHE", str(tmp_path / "c"))
    monkeypatch.setenv("FEDREPRO_OFFLINE", "1")
    rec = F.record(DATASET, FILE)
    monkeypatch.setattr(F, "locate", lambda r: None)
    with pytest.raises(F.DataFileMissing) as info:
        F.fetch(rec.dataset, rec.file)
    assert str(info.value).count("  - ") == 3
    assert "shared mirror" in str(info.value)


def _patched_manifest(monkeypatch, url: str):
    rec = F.record(DATASET, FILE)
    fake = dict(F.manifest())
    fake[(DATASET, FILE)] = F.FileRecord(**{**rec.__dict__, "url": url})
    monkeypatch.setattr(F, "manifest", lambda: fake)
    return rec


def test_download_into_cache_is_verified(original, no_shared, monkeypatch):
    src = no_shared / "upstream" / FILE
    src.parent.mkdir()
    shutil.copyfile(original, src)
    rec = _patched_manifest(monkeypatch, src.as_uri())
    path = F.fetch(DATASET, FILE)
    assert path == no_shared / "cache" / DATASET / FILE
    assert _sha(path) == rec.sha256


def test_corrupt_download_is_refused_and_not_kept(original, no_shared, monkeypatch):
    src = no_shared / "upstream" / FILE
    src.parent.mkdir()
    src.write_bytes(original.read_bytes()[:-1] + b"X")
    _patched_manifest(monkeypatch, src.as_uri())
    with pytest.raises(F.DataFileCorrupt):
        F.fetch(DATASET, FILE)
    cache = no_shared / "cache" / DATASET
    assert not cache.exists() or list(cache.iterdir()) == []


def test_failed_download_is_a_missing_file_error(no_shared, monkeypatch):
    _patched_manifest(monkeypatch, (no_shared / "absent").as_uri())
    with pytest.raises(F.DataFileMissing, match="Download from file:"):
        F.fetch(DATASET, FILE)


def test_data_verify_counts_every_mirror_file(capsys):
    assert main(["data", "verify"]) == 0
    out = capsys.readouterr().out
    assert "522 files: 522 ok, 0 corrupt, 0 missing" in out
    assert "bsds500" in out and " ok  500" in out
