"""The ``graphed`` local-step backend: one round's M local GDA steps of all clients, with the
round's minibatches drawn up front and, on a CUDA device, replayed from a captured CUDA graph.

Why: on an H100 one vmapped two-client step of the MNIST CNN took 12-21 ms
(``make bench`` there: CPU 1 thread over CUDA 14-31x), against well under 1 ms of arithmetic
(about 7.6-9.4 GFLOP per step). The time went to launching a few hundred small kernels from
Python, and to the blocking host-to-device copies of each step's minibatch indices and dropout
masks, which stop the host from running ahead of the device. This backend

1. draws every client's minibatch indices and dropout masks for the whole round on the host
   (:meth:`repro.fedmm.problem.DAProblem.round_inputs`) and moves them in one non-blocking copy
   per array, and
2. on CUDA captures the M steps once as a CUDA graph (static input and output buffers) and
   replays it each round: one launch per round instead of a few hundred per step.

It computes the same function as the ``vectorized`` backend, step for step (the update of
:class:`repro.fedmm.local_gda.LocalGDA`, the same vmapped gradient on the same rows and masks);
on the CPU, where nothing is captured, the two are bitwise equal (tested). On CUDA the graph
replays the kernels eager mode would launch, but the backend is a separate name in the cell
config all the same, so records of the two never mix (docs/deviations.md#fedmm-backend).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

Tensor = torch.Tensor


class CapturedCall:
    """``fn()`` (no arguments, reading and writing only tensors that live as long as this
    object) captured as a CUDA graph on its first call on a CUDA device and replayed after;
    called eagerly on any other device.

    Capture follows PyTorch's recipe: warm-up calls on a side stream (cuBLAS/cuDNN handles,
    the allocator), then one call under ``torch.cuda.graph``. The warm-up runs ``fn`` for real,
    so ``keep`` lists tensors whose values it must not change (restored after the capture).
    """

    def __init__(self, fn: Callable[[], None], device: torch.device,
                 keep: tuple[Tensor, ...] = (), warmup: int = 2) -> None:
        self.fn, self.device, self.keep, self.warmup = fn, torch.device(device), keep, warmup
        self.graph = None

    @property
    def captured(self) -> bool:
        return self.graph is not None

    def __call__(self) -> None:
        if self.device.type != "cuda":
            self.fn()
            return
        if self.graph is None:
            self._capture()
        self.graph.replay()

    def _capture(self) -> None:
        saved = [t.clone() for t in self.keep]
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            for _ in range(self.warmup):
                self.fn()
        torch.cuda.current_stream(self.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.fn()
        for t, s in zip(self.keep, saved, strict=True):
            t.copy_(s)
        self.graph = graph


class GraphedRound:
    """The M local steps of one round for every client, on static buffers.

    ``oracle`` is a :class:`repro.fedmm.problem.DAProblem` (its ``round_inputs`` and
    ``round_gradient``); ``prox``/``dual`` say whether the update has the ``mu (theta -
    theta0)`` and ``d_i`` terms (FedMM both, FedProxGDA prox, FedAvgGDA/FedSGDA neither).
    :meth:`__call__` runs a round and returns the clients' new local iterates (N, D).
    """

    def __init__(self, oracle, steps: int, prox: bool, dual: bool, theta0: Tensor) -> None:
        n, d = oracle.n_clients, theta0.numel()
        dev, dt = theta0.device, theta0.dtype
        self.oracle, self.steps, self.prox, self.dual = oracle, steps, prox, dual
        self.theta0 = torch.empty(d, dtype=dt, device=dev)
        self.eta = torch.empty(d, dtype=dt, device=dev)
        self.scale = torch.empty(d, dtype=dt, device=dev)
        self.mu = torch.empty(d, dtype=dt, device=dev) if prox else None
        self.duals = torch.empty(n, d, dtype=dt, device=dev) if dual else None
        self.out = torch.empty(n, d, dtype=dt, device=dev)
        self.inputs: dict[str, Tensor] | None = None  # the round's rows and masks, static
        self._constants: tuple = ()  # the (eta, scale, mu) objects last copied in
        self.call = CapturedCall(self._steps, dev, keep=oracle.round_state())

    def _steps(self) -> None:
        """(11)/(12) for M steps, as :meth:`repro.fedmm.local_gda.LocalGDA.__call__` writes
        them for the ``vectorized`` backend.
        """
        n = self.oracle.n_clients
        theta = self.theta0.expand(n, -1).clone()
        for m in range(self.steps):
            direction = self.scale * self.oracle.round_gradient(theta, self.inputs, m)
            if self.mu is not None:
                direction = direction + self.mu * (theta - self.theta0)
            if self.duals is not None:
                direction = direction + self.duals
            theta = theta - self.eta * direction
        self.out.copy_(theta)

    def __call__(self, theta0: Tensor, eta: Tensor, scale: Tensor, mu: Tensor | None,
                 duals: Tensor | None) -> Tensor:
        if (mu is not None) != self.prox or (duals is not None) != self.dual:
            raise ValueError(f"this graphed round was built with prox={self.prox}, "
                             f"dual={self.dual}; got mu={'set' if mu is not None else None}, "
                             f"duals={'set' if duals is not None else None}")
        host = self.oracle.round_inputs(self.steps)
        if self.inputs is None:
            self.inputs = {k: torch.empty(v.shape, dtype=v.dtype, device=self.out.device)
                           for k, v in host.items()}
        for k, v in host.items():
            self.inputs[k].copy_(v, non_blocking=True)
        pairs = [(self.theta0, theta0), (self.duals, duals)]
        if len(self._constants) != 3 or any(
                a is not b for a, b in zip(self._constants, (eta, scale, mu), strict=True)):
            # the run's step sizes, multipliers and penalties: copied once, not every round
            pairs += [(self.eta, eta), (self.scale, scale), (self.mu, mu)]
            self._constants = (eta, scale, mu)
        for buf, value in pairs:
            if buf is not None:
                buf.copy_(value)
        self.call()
        return self.out.clone()


__all__ = ["CapturedCall", "GraphedRound"]
