"""The README's "Use it as a library" example runs and asserts what it computes."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_library_example_runs():
    text = README.read_text()
    section = text.split("## Use it as a library", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1 and "assert" in blocks[0]
    exec(compile(blocks[0], "README.md (Use it as a library)", "exec"), {})
