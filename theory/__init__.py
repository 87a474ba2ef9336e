"""fedrepro's theory checks (``python -m theory`` in the checkout).

A check computes what it constrains: every reference quantity is written here from the paper's
formulas, never read from the package (``theory.reference_rule`` states what a check may take
from ``repro/`` and a test enforces it); each round it drives is audited against a round written
here; it drives every code path the experiments run (``theory.paths``); each term of its
statement is shown active (``theory.evidence``); and it runs the paper's own hyperparameters.
docs/design.md, "A theory check computes what it constrains", has the whole rule.

Installed from the wheel this package is ``repro.theory`` (setup.py: the wheel adds one top-level
name, ``repro``), while its modules import each other as ``theory.*``: loaded as ``repro.theory``,
it is registered under ``theory`` as well, in the process that imports it and only where no
``theory`` is imported there already.
"""

import sys as _sys

if __name__ != "theory":
    _sys.modules.setdefault("theory", _sys.modules[__name__])
