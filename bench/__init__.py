"""fedrepro's benchmarks (``python -m bench`` in the checkout).

Installed from the wheel this package is ``repro.bench`` (setup.py: the wheel adds one top-level
name, ``repro``), while its modules import each other as ``bench.*``: loaded as ``repro.bench``,
it is registered under ``bench`` as well, in the process that imports it and only where no
``bench`` is imported there already.
"""

import sys as _sys

if __name__ != "bench":
    _sys.modules.setdefault("bench", _sys.modules[__name__])
