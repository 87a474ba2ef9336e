"""fedrepro's theory checks (``python -m theory`` in the checkout).

Installed from the wheel this package is ``repro.theory`` (setup.py: the wheel adds one top-level
name, ``repro``), while its modules import each other as ``theory.*``: loaded as ``repro.theory``,
it is registered under ``theory`` as well, in the process that imports it and only where no
``theory`` is imported there already.
"""

import sys as _sys

if __name__ != "theory":
    _sys.modules.setdefault("theory", _sys.modules[__name__])
