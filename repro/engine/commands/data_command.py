"""``repro data verify|fetch``: the raw data files against their manifest.

``verify`` checks the sha256 of every manifest file (missing and corrupt files are listed on
stderr, then a count per dataset); ``fetch`` downloads what is missing into the cache, then
verifies. An unknown dataset name is an error naming the manifest's datasets.
"""

from __future__ import annotations

import sys
from collections import Counter

from repro.core.data.store import fetch, manifest, verify_all


def data_command(action: str, datasets: list[str]) -> int:
    """Run ``repro data ACTION DATASET...``; the exit status (1 when a file is missing or
    corrupt after ``verify``).
    """
    known = sorted({d for d, _ in manifest()})
    unknown = [d for d in datasets if d not in known]
    if unknown:
        raise ValueError(f"unknown dataset {unknown[0]!r}" + (
            f" (and {', '.join(map(repr, unknown[1:]))})" if unknown[1:] else "")
            + f"; the manifest's datasets: {', '.join(known)}")
    if action == "fetch":
        names = datasets or sorted({d for d, _ in manifest()})
        for (d, f) in sorted(manifest()):
            if d in names:
                fetch(d, f)
        print(f"fetched/verified every file of {', '.join(names)}")
        return 0
    counts: Counter = Counter()
    per_dataset: dict[str, Counter] = {}
    for rec, status, detail in verify_all(datasets or None):
        counts[status] += 1
        per_dataset.setdefault(rec.dataset, Counter())[status] += 1
        if status != "ok":
            print(f"{status.upper()}: {rec.relpath}: {detail}", file=sys.stderr)
    for d, c in per_dataset.items():
        print(f"{d:<30} ok {c['ok']:>4}  corrupt {c['corrupt']:>3}  missing {c['missing']:>3}")
    total = sum(counts.values())
    print(f"{total} files: {counts['ok']} ok, {counts['corrupt']} corrupt, "
          f"{counts['missing']} missing")
    return 0 if counts["corrupt"] == 0 and counts["missing"] == 0 else 1
