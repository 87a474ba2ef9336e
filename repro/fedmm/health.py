"""Whether a training run is still a run: a finiteness check that costs no host sync per round,
and the diagnostics logged beside the accuracy at each evaluation.

A model whose parameters left the floats (NaN or inf) still "predicts": ``argmax`` of an
all-NaN row is class 0, so its accuracy is one class's share of the evaluation set, and a loop
that only logs accuracy draws it as a collapse and goes on for hundreds of rounds.
:class:`FiniteWatch` keeps, on the device of the state, the first round at which any of the
watched tensors held a non-finite value and which ones; updating it is a few device kernels
(no ``.item()``, so a CUDA graph replay and the host stay asynchronous). It is read on the host
only where the loop stops anyway (each evaluation and checkpoint), and a non-finite state then
ends the run with :class:`repro.core.validation.DivergenceError` naming its first round: the
engine records the cell as a named divergence (final, counted apart).

:func:`state_diagnostics` gives what attributes a divergence from the record alone: max
|theta0| for every method and, for FedMM, the norm of each client's duals lambda_i (omega
block) and beta_i (psi block).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from repro.core.validation import DivergenceError
from repro.fedmm.federated import FedState

Tensor = torch.Tensor
NAN_BIT = 1 << 8  # set in the code when a NaN (not only an inf) was among the values


class FiniteWatch:
    """The first round at which a watched tensor was non-finite, kept on ``device``.

    ``names``: what each position of :meth:`update`'s tensors is called in the error. ``first``
    (int64, -1 while finite) and ``code`` (bit k: tensor k was non-finite at that round;
    :data:`NAN_BIT`: a NaN among them) are device tensors.
    """

    def __init__(self, names: Sequence[str], device: torch.device | str) -> None:
        self.names = tuple(names)
        self.device = torch.device(device)
        self.first = torch.full((), -1, dtype=torch.int64, device=self.device)
        self.code = torch.zeros((), dtype=torch.int64, device=self.device)
        self._bits = torch.tensor([1 << k for k in range(len(self.names))], dtype=torch.int64,
                                  device=self.device)

    def update(self, round_: int, tensors: Sequence[Tensor | None]) -> None:
        """Note ``round_`` if it is the first at which one of ``tensors`` (``None``: absent,
        e.g. a baseline's duals) is non-finite. Device kernels only: no host synchronization.
        """
        bad, nan = [], []
        for t in tensors:
            if t is None:
                bad.append(torch.zeros((), dtype=torch.bool, device=self.device))
                nan.append(bad[-1])
            else:
                bad.append(~torch.isfinite(t).all())
                nan.append(torch.isnan(t).any())
        code = (torch.stack(bad).long() * self._bits).sum()
        code = code + torch.stack(nan).any().long() * NAN_BIT
        new = (self.first < 0) & (code > 0)
        self.first = torch.where(new, round_, self.first)
        self.code = torch.where(new, code, self.code)

    def check(self) -> None:
        """Read the watch on the host (a synchronization); raise :class:`DivergenceError` with
        the first non-finite round, the tensors named and NaN (or inf where no NaN was seen).
        """
        first = int(self.first.item())
        if first < 0:
            return
        code = int(self.code.item())
        which = [n for k, n in enumerate(self.names) if code & (1 << k)]
        raise DivergenceError(first, " and ".join(which),
                              float("nan") if code & NAN_BIT else float("inf"))


def state_diagnostics(state: FedState, sizes: dict[str, int]) -> dict[str, float]:
    """Max |theta0|, and for a state with duals (FedMM) ``lambda_norm_<i>`` (||lambda_i||,
    the omega block of client i's dual) and ``beta_norm_<i>`` (||beta_i||, the psi block), in
    float64 (a float32 norm of large finite entries would overflow).
    """
    out = {"theta0_max_abs": float(state.theta0.detach().abs().max().double())}
    if state.duals is not None:
        omega = sizes["omega"]
        d = state.duals.detach().double()
        lam, beta = d[:, :omega].norm(dim=1), d[:, omega:].norm(dim=1)
        for i, (a, b) in enumerate(zip(lam.tolist(), beta.tolist(), strict=True)):
            out[f"lambda_norm_{i}"] = a
            out[f"beta_norm_{i}"] = b
    return out


def watched(state: FedState, extra: Sequence[Tensor] = ()) -> list[Tensor | None]:
    """The tensors :class:`FiniteWatch` watches in a state: theta0, the local iterates, the
    duals (None for the baselines), then ``extra`` (e.g. BatchNorm running statistics).
    """
    return [state.theta0, state.local, state.duals, *extra]


WATCHED = ("theta0", "local iterates", "duals", "running statistics")

__all__ = ["NAN_BIT", "WATCHED", "FiniteWatch", "state_diagnostics", "watched"]
