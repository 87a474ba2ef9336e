"""The repository's text stands alone: no docstring, comment, error message, generated text or
doc page refers to something a reader of the repository cannot open.

Forbidden (case-insensitive): issue numbers in any form ("issue 28", "#31", "Issue #16", a rule
id "issue-28"), paths into the shared reference folder (its specs, papers, design and style
notes) and spec-file citations ("specs/constrfl.md"). Also forbidden, case-sensitive: the specs'
assumption and departure ids ("A4", "D12") where they are used as citations: "(A4)",
"(A3, D7)", "A4:", "spec A4", "fairvfl A7", "D1-D14", ", A8)". A settled decision is cited by
its anchor in ``docs/decisions.md`` instead. The papers' own sections, equations, tables and
appendices ("[J] §5.2", "App. J.2", "(22)", "Lemma A.2") are public and stay, as does the data
mirror ``../shared/data`` the loaders read. ``spec=`` fields of readings name decisions.md
anchors.

The scanned set is declared in :data:`SCANNED`; every file under it (Python, Markdown, CSV,
JSON) is read, so a new file is scanned without an edit here. It includes the committed outputs
in ``figures/`` (the report, comparison, claims, tables, bench and run log a reader opens
first); the smoke and partial outputs beside them are ignored by git and not scanned.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Paths (files or folders, relative to the repository root) whose text must stand alone;
# ``EXCLUDED`` lists files inside them that are exempt (none).
SCANNED = [
    "repro",
    "theory",
    "bench",
    "docs",
    "README.md",
    "figures",
]
EXCLUDED: set[str] = set()
# generated outputs git ignores (smoke and partial runs): not the repository's text
IGNORED_OUTPUTS = {("figures", "smoke"), ("figures", "partial")}
SUFFIXES = {".py", ".md", ".csv", ".txt", ".json"}

_ID = r"[AD][1-9][0-9]?[a-z]?"
FORBIDDEN = {
    "issue number": re.compile(r"issues? ?#?[0-9]+", re.IGNORECASE),
    "issue rule id": re.compile(r"issue-[0-9]+", re.IGNORECASE),
    "#number": re.compile(r"[(, ]#[0-9]+\b"),
    "spec file": re.compile(r"specs?/[a-z]+\.md", re.IGNORECASE),
    "shared reference folder": re.compile(r"shared/(DESIGN|STYLE|specs|papers)", re.IGNORECASE),
    "design notes": re.compile(r"\bDESIGN\.md"),
    "spec section with id": re.compile(rf"§[0-9]+(\.[0-9]+)? {_ID}\b"),
    "spec id": re.compile(
        rf"\(\s*{_ID}(?=\s*[,;:)/–-])"                      # (A4)  (A3, D7  (A1: ...
        rf"|(?<![\w.§-]){_ID}:(?!\d)"                        # A4: ...
        rf"|\b(?:specs?|fairvfl|constrfl|relfair|fedmm|ids?|ambiguity|departures?)\s+{_ID}\b"
        rf"|(?<![\w.§-]){_ID}\s*[/–-]\s*{_ID}\b"             # D1-D14, A4/D9
        rf"|[,;]\s*{_ID}(?=\s*\))"),                       # ..., A8)
}
SPEC_FIELD = re.compile(r"""\bspec=\s*\(?\s*((?:f?"[^"]*"\s*)+)""")
ANCHOR = re.compile(r'<a id="([^"]+)"></a>')


def _files() -> list[Path]:
    out = []
    for entry in SCANNED:
        path = ROOT / entry
        found = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        out += [p for p in found if p.suffix in SUFFIXES and "__pycache__" not in p.parts
                and p.relative_to(ROOT).as_posix() not in EXCLUDED
                and p.relative_to(ROOT).parts[:2] not in IGNORED_OUTPUTS]
    return out


def offences(text: str) -> list[tuple[int, str, str]]:
    """``(line, kind, match)`` for every forbidden form in ``text``."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for kind, pattern in FORBIDDEN.items():
            found += [(number, kind, m.group()) for m in pattern.finditer(line)]
    return found


def test_scanned_paths_exist():
    missing = [p for p in SCANNED if not (ROOT / p).exists()]
    assert not missing, f"SCANNED names paths that do not exist: {missing}"
    assert len(_files()) > 100


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_reference_a_reader_cannot_open(path):
    bad = offences(path.read_text(encoding="utf-8", errors="replace"))
    where = path.relative_to(ROOT).as_posix()
    assert not bad, "\n".join(f"{where}:{n}: {kind}: {m!r} (cite docs/decisions.md#<anchor> "
                              "or state the reason in present tense)" for n, kind, m in bad)


def test_spec_fields_name_decision_anchors():
    anchors = set(ANCHOR.findall((ROOT / "docs" / "decisions.md").read_text()))
    named = {}
    for path in _files():
        if path.suffix != ".py":
            continue
        for m in SPEC_FIELD.finditer(path.read_text()):
            value = "".join(re.findall(r'"([^"]*)"', m.group(1)))
            for anchor in filter(None, (a.strip() for a in value.split(","))):
                named.setdefault(anchor, path.relative_to(ROOT).as_posix())
    assert named, "no spec= field found"
    unknown = {a: f for a, f in named.items() if a not in anchors}
    assert not unknown, f"spec= names no anchor of docs/decisions.md: {unknown}"


@pytest.mark.parametrize("text", [
    "see issue 28", "(issue #31: stop codes)", "Issue #16 item 3", "rule issue-28",
    "the records before #16", "specs/constrfl.md §6", "shared/DESIGN.md", "shared/specs/x",
    "(A4)", "(A3, D7)", "A4: which set", "spec A10", "fairvfl A7", "D1-D14", "A4/D9",
    "(weighted, A8)", "§11 A15", "DESIGN.md",
])
def test_forbidden_forms_are_found(text):
    assert offences(text), text


@pytest.mark.parametrize("text", [
    "[J] §5.2 names the metrics", "App. J.2", "Lemma A.2 and (22)", "Algorithm 1 lines 5-8",
    "an A100 GPU", "[J] §A.2", "A1, A2, out = self._buffers()", "relu(A1 W1ᵀ + b1)",
    "def f(D0: float)", "(d1, d2)", "the data mirror ../shared/data/MANIFEST.md",
    "docs/design.md#tolerances", "(C1a) AC non-decreasing in eps", "T = 2000 rounds",
    "docs/deviations.md#fairvfl-label-leak-a29", "Table 4 (10,500,5)", "x[:, d1:]",
])
def test_paper_content_is_not_flagged(text):
    assert not offences(text), offences(text)
