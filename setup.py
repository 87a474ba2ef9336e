"""Build hooks that pyproject.toml cannot express (the metadata is all in pyproject.toml).

1. **One top-level name.** The wheel installs ``repro`` alone: the theory checks (``theory/``)
   and the benchmarks (``bench/``) go in as ``repro.theory`` and ``repro.bench``
   (``package_dir``), not as top-level packages named ``theory`` and ``bench``, names another
   project may own. In the checkout they stay where they are, and ``python -m theory`` /
   ``python -m bench`` keep working there; installed, ``python -m repro.theory`` /
   ``python -m repro.bench`` (or ``repro theory``). Their modules import each other as
   ``theory.*`` / ``bench.*``: loaded as ``repro.theory`` the package registers itself under
   ``theory`` too (``theory/__init__.py``), in the process that runs it only.
2. **The commit the wheel was built from** is written into it (``repro/_build_commit.txt``),
   so the records an installed wheel makes name their commit
   (``repro.engine.run.code_identity.git_commit``) instead of leaving the field empty.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
COMMIT_FILE = "_build_commit.txt"


def source_commit(root: Path = ROOT) -> str:
    """``git rev-parse HEAD`` of ``root`` (``+dirty`` when ``repro/`` differs from it), else
    ``$FEDREPRO_COMMIT``, else ``""`` (a source tree without git, e.g. an sdist).
    """
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"],
                                capture_output=True, text=True, timeout=10,
                                check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "repro"],
                               capture_output=True, text=True, timeout=10,
                               check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return os.environ.get("FEDREPRO_COMMIT", "")
    return commit + ("+dirty" if dirty else "")


class BuildWithCommit(build_py):
    """``build_py``, then the source's commit written into the built ``repro`` package."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "repro" / COMMIT_FILE
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source_commit() + "\n")


OUTSIDE = ("theory", "bench")  # shipped under repro.<name>
packages = find_packages(str(ROOT), include=["repro", "repro.*"])
for name in OUTSIDE:
    packages += [f"repro.{p}" for p in find_packages(str(ROOT), include=[name, f"{name}.*"])]

setup(packages=packages, package_dir={f"repro.{name}": name for name in OUTSIDE},
      cmdclass={"build_py": BuildWithCommit})
