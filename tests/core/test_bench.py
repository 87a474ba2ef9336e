"""`make bench` plumbing: ratios written with the machine they ran on."""

from __future__ import annotations

import re

from repro.core.bench import load_benchmarks, main


def test_bench_writes_ratios(tmp_path, capsys):
    assert main(["--only", "core.projections", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "bench.md").read_text()
    rows = re.findall(r"^\| core\.projections \| .* \| ([0-9.]+)x \|$", text, flags=re.M)
    assert len(rows) == 6 and all(float(r) > 0 for r in rows)
    assert "Machine: " in text and "cores" in text
    assert main(["--only", "nothing.*", "--out", str(tmp_path)]) == 2


def test_paper_benchmarks_register_where_main_reads_them():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", (
        "import repro.core.bench as b; "
        "from repro import bench; print(bench.benchmark is b.benchmark)")],
        capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"
    assert set(load_benchmarks()) >= {"core.projections", "core.demo"}
