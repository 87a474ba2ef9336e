"""The saddle-point problem of paper 004 and its federated adversarial DA instance.

The problem is min_omega max_psi f(omega, psi) = (1/N) sum_i f_i(omega, psi) (eqs. (2)-(4)).
Every algorithm sees it through the clients' *player gradients* (:class:`PlayerGradient`):
``G_i = [grad_omega f_i ; -grad_psi f_i]`` on ``theta = [omega; psi]``
(docs/decisions.md#fedmm-algorithm, block-wise form), so that descending ``G`` is gradient descent
in omega and ascent in psi.

:class:`DAProblem` implements it for a :class:`DANet`: each call draws
every client's next minibatch (its own source and target streams, its own dropout generator)
and returns ``G_i = sign * grad f_i`` at the given parameters, with ``torch.func.vmap`` over the
clients (``batched``) or one client at a time (``client``, the loop oracle).

BatchNorm running statistics (Office bottleneck only) are buffers, not parameters: each client
updates its own with momentum 0.1 during local steps and :meth:`DAProblem.sync_buffers` averages
them at the server after the round [docs/decisions.md#fedmm-office-model, R]; no duals act on them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import torch
from torch.func import grad, vmap

from repro.fedmm.adaptation import mdd_neg_log_a, objective, player_sign
from repro.fedmm.clients import BatchStream, ClientData
from repro.fedmm.models import DANet

Tensor = torch.Tensor


class PlayerGradient(Protocol):
    """Stochastic player gradients of the clients' local objectives f_i.

    ``batched(theta, t, m)`` takes ``(N, D)`` client parameters and returns ``(N, D)``
    gradients for local step ``m`` of round ``t`` (each client drawing its own next minibatch);
    ``client(i, theta_i, t, m)`` is the same for one client and must give the same numbers.
    """

    n_clients: int

    def batched(self, theta: Tensor, t: int, m: int) -> Tensor: ...

    def client(self, i: int, theta_i: Tensor, t: int, m: int) -> Tensor: ...


class DAProblem:
    """Clients of a federated DA task; ``batched``/``client`` give the player gradients."""

    def __init__(self, net: DANet, nu: float, clients: Sequence[ClientData], source_x: Tensor,
                 source_y: Tensor, target_x: Tensor, batch: int,
                 rngs: Sequence[tuple[np.random.Generator, np.random.Generator]],
                 generators: Sequence[torch.Generator], dtype=torch.float32) -> None:
        if len(rngs) != len(clients) or len(generators) != len(clients):
            raise ValueError("need one (source rng, target rng) pair and one torch generator "
                             f"per client; got {len(rngs)}, {len(generators)} for "
                             f"{len(clients)} clients")
        self.net, self.nu, self.clients, self.batch = net, float(nu), list(clients), batch
        self.source_x, self.source_y, self.target_x = source_x, source_y.long(), target_x
        self.n_clients = len(clients)
        self.dtype = dtype
        self.streams = []
        for c, (rs, rt) in zip(self.clients, rngs, strict=True):
            ns, nt = c.batch_split(batch)
            self.streams.append((BatchStream(c.source, ns, rs), BatchStream(c.target, nt, rt)))
        self.generators = list(generators)
        # Everything per step stays on the data's device (a GPU when the caller puts the data
        # there); only minibatch indices and dropout masks are drawn on the host.
        self.device = source_x.device
        self.sign = player_sign(net, dtype).to(self.device)
        self.has_bn = hasattr(net, "feature_in")
        width = net.feature_dim
        self.running = torch.stack([torch.zeros(self.n_clients, width, dtype=dtype),
                                    torch.ones(self.n_clients, width, dtype=dtype)],
                                   dim=1).to(self.device)

        def f(theta, x, y, is_source, masks):
            return objective(net, self.nu, theta, x, y, is_source, masks)

        self._pool: tuple[Tensor, Tensor, Tensor] | None = None  # built by _pools()
        self._grad = grad(f, has_aux=True)
        self._vgrad = vmap(self._grad, randomness="error")

    @property
    def sizes(self) -> dict[str, int]:
        """The coordinate split of theta = [omega; psi] (the network's)."""
        return self.net.sizes

    def draw(self, i: int) -> tuple[Tensor, Tensor, Tensor, dict]:
        """Client i's next minibatch (source rows first) and its dropout masks."""
        s_stream, t_stream = self.streams[i]
        s_idx, t_idx = torch.from_numpy(s_stream.next()), torch.from_numpy(t_stream.next())
        x = torch.cat([self.source_x[s_idx], self.target_x[t_idx]])
        y = torch.cat([self.source_y[s_idx],
                       torch.zeros(len(t_idx), dtype=torch.long, device=self.device)])
        is_source = torch.cat([torch.ones(len(s_idx), dtype=torch.bool),
                               torch.zeros(len(t_idx), dtype=torch.bool)]).to(self.device)
        masks = {k: v.to(self.device) for k, v in
                 self.net.dropout_masks(len(x), self.generators[i], self.dtype).items()}
        return x, y, is_source, masks

    def _update_running(self, i, stats) -> None:
        if self.has_bn:
            m = self.net.BN_MOMENTUM
            self.running[i, 0] = (1 - m) * self.running[i, 0] + m * stats["batch_mean"].detach()
            self.running[i, 1] = (1 - m) * self.running[i, 1] + m * stats["batch_var"].detach()

    def client(self, i: int, theta_i: Tensor, t: int, m: int) -> Tensor:
        x, y, s, masks = self.draw(i)
        g, stats = self._grad(theta_i, x, y, s, masks)
        self._update_running(i, stats)
        return self.sign * g

    def batched(self, theta: Tensor, t: int, m: int) -> Tensor:
        draws = [self.draw(i) for i in range(self.n_clients)]
        x, y, s = (torch.stack([d[k] for d in draws]) for k in range(3))
        masks = {k: torch.stack([d[3][k] for d in draws]) for k in draws[0][3]}
        g, stats = self._vgrad(theta, x, y, s, masks)
        for i in range(self.n_clients):
            self._update_running(i, {k: v[i] for k, v in stats.items()})
        return self.sign * g

    # -- the graphed backend (repro.fedmm.graphed): a whole round's inputs at once ------------
    def round_inputs(self, steps: int) -> dict[str, Tensor]:
        """Every client's rows and dropout masks for its next ``steps`` local steps, on the
        host: ``rows`` (steps, N, B) indexes the stacked pool [source; target] (a client's
        source rows first, as :meth:`draw` orders them), ``mask:<layer>`` (steps, N, B, w).

        The draws are exactly those of ``steps`` calls of :meth:`draw` per client: each client
        has its own source and target streams and its own dropout generator, so drawing a
        client's steps one after the other gives the numbers the per-step interleaving gives.
        On a CUDA device the arrays are pinned, so their copies to the device do not block.
        """
        n, b = self.n_clients, self.batch
        offset = len(self.source_x)
        rows = np.empty((steps, n, b), dtype=np.int64)
        masks = {k: torch.empty((steps, n, b, w), dtype=self.dtype)
                 for k, w in self.net.dropout_widths.items()}
        for i, (s_stream, t_stream) in enumerate(self.streams):
            for m in range(steps):
                s_idx, t_idx = s_stream.next(), t_stream.next()
                rows[m, i, :len(s_idx)] = s_idx
                rows[m, i, len(s_idx):] = offset + t_idx
                for k, v in self.net.dropout_masks(b, self.generators[i], self.dtype).items():
                    masks[k][m, i] = v
        out = {"rows": torch.from_numpy(rows), **{f"mask:{k}": v for k, v in masks.items()}}
        if self.device.type == "cuda":
            out = {k: v.pin_memory() for k, v in out.items()}
        return out

    def _pools(self) -> tuple[Tensor, Tensor, Tensor]:
        """The stacked images [source; target], their labels (0 on target rows, as
        :meth:`draw` sets them) and each client's source-row flags (N, B); built once.
        """
        if self._pool is None:
            nt = len(self.target_x)
            x = torch.cat([self.source_x, self.target_x])
            y = torch.cat([self.source_y, torch.zeros(nt, dtype=torch.long,
                                                      device=self.device)])
            flags = torch.zeros(self.n_clients, self.batch, dtype=torch.bool)
            for i, (s_stream, _) in enumerate(self.streams):
                flags[i, :s_stream.batch] = True
            self._pool = (x, y, flags.to(self.device))
        return self._pool

    def round_gradient(self, theta: Tensor, inputs: dict[str, Tensor], m: int) -> Tensor:
        """:meth:`batched` on step ``m`` of a round's ``inputs`` (:meth:`round_inputs`, on the
        device): the same rows, masks and vmapped gradient, without a host round trip.
        """
        x_pool, y_pool, is_source = self._pools()
        rows = inputs["rows"][m]
        masks = {k[len("mask:"):]: v[m] for k, v in inputs.items() if k.startswith("mask:")}
        g, stats = self._vgrad(theta, x_pool[rows], y_pool[rows], is_source, masks)
        if self.has_bn:
            mom = self.net.BN_MOMENTUM
            self.running[:, 0] = (1 - mom) * self.running[:, 0] + mom * stats["batch_mean"]
            self.running[:, 1] = (1 - mom) * self.running[:, 1] + mom * stats["batch_var"]
        return self.sign * g

    def round_state(self) -> tuple[Tensor, ...]:
        """The tensors :meth:`round_gradient` updates in place (a graph's warm-up must restore
        them).
        """
        return (self.running,) if self.has_bn else ()

    def sync_buffers(self) -> None:
        """Server: plain average of the clients' BN running statistics."""
        self.running[:] = self.running.mean(dim=0, keepdim=True)

    @torch.no_grad()
    def predict(self, theta: Tensor, x: Tensor, chunk: int = 2000) -> Tensor:
        """Eval-mode predictions of the model ``theta`` (no dropout; MNIST: the whole evaluated
        set's mean is subtracted, as the authors' code feeds it in one batch).
        """
        p = self.net.unflatten(theta)
        mean = x.to(self.dtype).mean() if not self.has_bn else None
        stats = {"running_mean": self.running[:, 0].mean(0),
                 "running_var": self.running[:, 1].mean(0)}
        out = []
        for k in range(0, len(x), chunk):
            z = self.net.features(p, x[k:k + chunk], mean=mean, train=False, stats=stats)
            out.append(self.net.classify(p, z).argmax(1))
        return torch.cat(out)

    def accuracy(self, theta: Tensor, x: Tensor, y: Tensor, chunk: int = 2000) -> float:
        return float((self.predict(theta, x, chunk) == y.long()).double().mean())

    @torch.no_grad()
    def adversary_neg_log_a(self, theta: Tensor, x: Tensor) -> Tensor:
        """MDD's ``-log a[yhat]`` per row of ``x`` under the model ``theta``, in eval mode (no
        dropout, the rows' own mean subtracted, as :meth:`predict`): ``a`` the adversary's
        softmax probability of the classifier's predicted class ``yhat`` (log space,
        :func:`repro.fedmm.adaptation.mdd_neg_log_a`). A diagnostic: its growth is what makes a
        probability-space MDD loss overflow; it consumes no random stream.
        """
        p = self.net.unflatten(theta)
        mean = x.to(self.dtype).mean() if not self.has_bn else None
        stats = {"running_mean": self.running[:, 0].mean(0),
                 "running_var": self.running[:, 1].mean(0)}
        z = self.net.features(p, x, mean=mean, train=False, stats=stats)
        return mdd_neg_log_a(self.net.adversary(p, z), self.net.classify(p, z).argmax(1))

    # -- checkpointing -------------------------------------------------------------------------
    def rng_state(self) -> dict:
        """Everything random that a resumed run needs to continue bit for bit."""
        return {"streams": [[(s.rng.bit_generator.state, s.order.copy(), s.pos) for s in pair]
                            for pair in self.streams],
                "generators": [g.get_state() for g in self.generators],
                "running": self.running.clone()}

    def set_rng_state(self, state: dict) -> None:
        for pair, saved in zip(self.streams, state["streams"], strict=True):
            for s, (bg, order, pos) in zip(pair, saved, strict=True):
                s.rng.bit_generator.state = bg
                s.order, s.pos = order, pos
        for g, st in zip(self.generators, state["generators"], strict=True):
            g.set_state(st)
        # in place: a captured graph (repro.fedmm.graphed) holds this tensor
        self.running.copy_(state["running"])
