"""``docs/deviations.md`` as the comparison and the claims use it: where it is, the anchors of
its headings, and the check that a ``substitute_data`` row links an entry of it.

The file lives in the source tree, not in the package: an installed wheel has none, and then
the links cannot be verified (the checkout's tests verify them).
"""

from __future__ import annotations

import re
from pathlib import Path

from repro.engine.compare.verdict import DEVIATIONS

DEVIATIONS_FILE = Path(__file__).resolve().parents[3] / DEVIATIONS


def heading_anchor(heading: str) -> str:
    """The GitHub anchor of a Markdown heading: lower case, punctuation dropped, spaces to
    hyphens.
    """
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def check_substitute_link(link: str, row_text: str,
                          deviations: Path = DEVIATIONS_FILE) -> None:
    """A ``substitute_data`` row must link an existing entry of ``docs/deviations.md``.

    Outside a source checkout (an installed wheel ships no ``docs/``) only the link's form is
    checked; the entry's existence is checked wherever the file is present (the tests).
    """
    where = f"{row_text}: substitute_data={link!r}"
    prefix = f"{DEVIATIONS}#"
    if not link.startswith(prefix):
        raise ValueError(f"{where} must be '{prefix}<anchor>' (the entry showing the paper's "
                         f"data cannot be obtained); give the experiment's reproduce() that link")
    if not deviations.is_file():
        return
    text = deviations.read_text()
    anchors = {heading_anchor(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}
    if link[len(prefix):] not in anchors:
        raise ValueError(f"{where} links no entry of {deviations}: add the entry (a heading "
                         f"whose anchor is {link[len(prefix):]!r}) saying why the paper's data "
                         f"cannot be obtained, or judge the row as a normal comparison")
