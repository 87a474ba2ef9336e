"""What the fedmm method files share (no method here): the default coordinate blocks.

Each method declares the options it reads (its config's fields, :func:`repro.core.methods.
fields_of`): ``blocks`` (default: the problem's omega/psi split with the paper's eta = 0.01,
mu = 1, :func:`repro.fedmm.blocks.paper_blocks`), ``local_steps`` M, and FedMM's
``eta3``/``eta3_constant`` of (15). One set of options builds every method of a comparison, each
method receiving the options it declares (FedSGDA no ``local_steps``, the baselines no
``eta3``).
"""

from __future__ import annotations

from typing import Any

from repro.fedmm.blocks import paper_blocks


def make_config(cls: type, problem: Any, options: dict) -> Any:
    """``cls(blocks=..., **options)``, the blocks the paper's where not given."""
    kw = {k: v for k, v in options.items() if k != "blocks"}
    blocks = options.get("blocks")
    return cls(blocks=paper_blocks(problem) if blocks is None else tuple(blocks), **kw)
