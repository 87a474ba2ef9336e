"""docs/decisions.md: every decision has one stable anchor, and every link to the page (from
itself, the docs, the README or the code) names an anchor that exists.
"""

from __future__ import annotations

import collections
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "decisions.md"
ANCHOR = re.compile(r'<a id="([^"]+)"></a>')


def _anchors() -> collections.Counter:
    return collections.Counter(ANCHOR.findall(PAGE.read_text()))


def test_each_anchor_is_unique_and_every_internal_link_resolves():
    anchors = _anchors()
    assert len(anchors) > 150 and max(anchors.values()) == 1
    links = set(re.findall(r"\]\(#([^)]+)\)", PAGE.read_text()))
    assert links <= set(anchors), sorted(links - set(anchors))
    for paper in ("design", "constrfl", "fairvfl", "relfair", "fedmm"):
        assert paper in anchors


def test_every_citation_of_the_page_names_an_existing_anchor():
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "repro", "theory", "bench",
                            "docs", "README.md", "figures/*.md"],
                           capture_output=True, text=True, check=True).stdout.split()
    cited = set()
    for name in files:
        path = ROOT / name
        if path.suffix in (".py", ".md") and path.is_file():
            cited |= set(re.findall(r"decisions\.md#([a-z0-9-]+)", path.read_text()))
    assert cited <= set(_anchors()), sorted(cited - set(_anchors()))
