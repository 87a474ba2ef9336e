"""The flat parameter vector ``theta = [omega; psi]`` of paper 004's algorithms and its
coordinate blocks, each with its own step, penalty and gradient multiplier
(docs/decisions.md#fedmm-algorithm, block-wise form; docs/decisions.md#fedmm-hyperparameters).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from repro.core.validation import check_range

Tensor = torch.Tensor


@dataclass(frozen=True)
class Block:
    """One coordinate block of ``theta`` with its own step, penalty and gradient multiplier.

    ``eta`` is eta1 (omega blocks) or eta2 (psi blocks); ``mu`` is mu1 or mu2; ``scale`` is the
    authors' code's per-block gradient multiplier s_b (1 in the paper form,
    docs/decisions.md#fedmm-hyperparameters).
    """

    name: str
    size: int
    eta: float
    mu: float = 1.0
    scale: float = 1.0

    def __post_init__(self) -> None:
        check_range(f"{self.name}.size", self.size, low=1)
        check_range(f"{self.name}.eta", self.eta, low=0, low_open=True)
        check_range(f"{self.name}.mu", self.mu, low=0)
        check_range(f"{self.name}.scale", self.scale, low=0, low_open=True)


def check_blocks(blocks) -> tuple[Block, ...]:
    """``blocks`` as a non-empty tuple of :class:`Block` (a config's validation), else a
    ValueError naming the field.
    """
    blocks = tuple(blocks) if not isinstance(blocks, Block) else (blocks,)
    if not blocks:
        raise ValueError("blocks must be non-empty, got ()")
    bad = [type(b).__name__ for b in blocks if not isinstance(b, Block)]
    if bad:
        raise ValueError(f"blocks must hold repro.fedmm.blocks.Block objects, got {bad}")
    return blocks


# Sec. 6, "Hyper-parameters" (MNIST -> MNIST-M, the paper form of
# docs/decisions.md#fedmm-hyperparameters): one step eta = 0.01 for both players and the penalty mu
# = 1
PAPER_ETA, PAPER_MU = 0.01, 1.0


def paper_blocks(problem) -> tuple[Block, Block]:
    """The omega and psi blocks of a problem that states its split (``problem.sizes``, a
    mapping with ``omega`` and ``psi``: :class:`repro.fedmm.problem.DAProblem`,
    :class:`repro.fedmm.instances.QuadOracle`) with the paper's step and penalty (Sec. 6:
    eta = 0.01, mu = 1): what a method's ``configure`` uses when no ``blocks=`` is given.
    """
    sizes = getattr(problem, "sizes", None)
    if sizes is None:
        raise ValueError(f"{type(problem).__name__} does not state its coordinate split "
                         "(no `sizes` with 'omega' and 'psi'): pass blocks=(Block('omega', d1, "
                         "eta1, mu1), Block('psi', d2, eta2, mu2)) to the method")
    return (Block("omega", int(sizes["omega"]), PAPER_ETA, PAPER_MU),
            Block("psi", int(sizes["psi"]), PAPER_ETA, PAPER_MU))


def block_vectors(blocks: Sequence[Block], dtype=torch.float32,
                  device: torch.device | str = "cpu") -> tuple[Tensor, Tensor, Tensor]:
    """Per-coordinate ``(eta, mu, scale)`` vectors of length ``sum(b.size)``."""

    def vec(attr: str) -> Tensor:
        return torch.cat([torch.full((b.size,), float(getattr(b, attr)), dtype=dtype,
                                     device=device) for b in blocks])

    return vec("eta"), vec("mu"), vec("scale")


def as_parameter_vector(theta0) -> Tensor:
    """``theta0`` as a torch tensor: a torch tensor is used as is; a numpy array (or a list) of
    real numbers becomes a CPU tensor of the same precision (float32 stays float32, everything
    else float64). The algorithms' state (:class:`repro.fedmm.federated.FedState`) and the
    vectors handed to the player-gradient oracle are torch tensors of that dtype;
    ``state.theta0.numpy()`` gives the result back as numpy.
    """
    if isinstance(theta0, Tensor):
        return theta0
    arr = np.asarray(theta0)
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"theta0 must be a real vector (numpy array or torch tensor), got "
                         f"dtype {arr.dtype}")
    return torch.from_numpy(np.array(arr, dtype=np.float32 if arr.dtype == np.float32
                                     else np.float64))
