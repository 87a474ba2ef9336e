"""docs/usage.md: every ```python block runs as written and its closing asserts hold."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from repro.engine.registry import paper_packages

USAGE = Path(__file__).resolve().parents[2] / "docs" / "usage.md"
# every paper package with public names has one example (discovered, none listed)
PACKAGES = tuple(p for p, _ in paper_packages()
                 if hasattr(importlib.import_module(f"repro.{p}"), "__all__"))


def _examples() -> list[tuple[str, str]]:
    """(heading, code) of every python block, in file order."""
    out, heading = [], ""
    for m in re.finditer(r"^(#+ [^\n]+)$|^```python\n(.*?)^```$", USAGE.read_text(),
                         flags=re.M | re.S):
        if m.group(1):
            heading = m.group(1).lstrip("# ")
        else:
            out.append((heading, m.group(2)))
    return out


EXAMPLES = _examples()


def test_one_example_per_paper_each_ending_in_asserts():
    owners = [[p for p in PACKAGES if f"({p})" in heading] for heading, _ in EXAMPLES]
    assert all(len(o) == 1 for o in owners), owners  # every example under one paper
    assert sorted({o[0] for o in owners}) == sorted(PACKAGES), owners  # every paper has one
    for (_, code), (pkg,) in zip(EXAMPLES, owners, strict=True):
        assert f"from repro.{pkg} import" in code
        assert "repro.core" not in code  # no experiment machinery
        assert code.rstrip().splitlines()[-1].startswith("assert ")


@pytest.mark.parametrize("code", [c for _, c in EXAMPLES],
                         ids=[h.split(":")[0] for h, _ in EXAMPLES])
def test_example_runs(code):
    import torch

    # One thread, as `make test` runs: on a loaded 2-core machine torch's default of one
    # thread per core makes these tiny matrix products several times slower.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        exec(compile(code, str(USAGE), "exec"), {"__name__": "usage_example"})
    finally:
        torch.set_num_threads(threads)


def test_readme_import_lines_resolve():
    readme = (USAGE.parents[1] / "README.md").read_text()
    blocks = [b for b in re.findall(r"^```python\n(.*?)^```$", readme, flags=re.M | re.S)
              if b.lstrip().startswith("from repro")]
    assert blocks and any("from repro.constrfl import ProxAL" in b for b in blocks)
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {"__name__": "readme_example"})
