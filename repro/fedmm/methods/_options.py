"""The options every fedmm method's ``configure`` accepts (shared by the method modules; no
method here).
"""

from __future__ import annotations

from typing import Any

from repro.fedmm.blocks import paper_blocks

OPTIONS = ("blocks", "local_steps", "eta3", "eta3_constant")
"""``blocks``: the coordinate blocks (default: the problem's omega/psi split with the paper's
eta = 0.01, mu = 1, :func:`repro.fedmm.blocks.paper_blocks`); ``local_steps``: M;
``eta3``/``eta3_constant``: FedMM's (15)."""


def make_config(cls: type, problem: Any, options: dict, uses: tuple[str, ...]) -> Any:
    """``cls(blocks=..., **the options of `uses` that were given)``: an option outside
    :data:`OPTIONS` is a ValueError naming it; an option of :data:`OPTIONS` the method has not
    (``uses``) is not its parameter and is left out (FedSGDA's ``local_steps``, the baselines'
    ``eta3``), so one set of options builds every method of a comparison.
    """
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown option(s) {unknown}; the fedmm methods "
                         f"take {list(OPTIONS)}")
    kw = {k: v for k, v in options.items() if k in uses and k != "blocks"}
    blocks = options.get("blocks")
    return cls(blocks=paper_blocks(problem) if blocks is None else tuple(blocks), **kw)
