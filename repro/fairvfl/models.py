"""Per-party model blocks ``g_k(theta_k; X^k)`` (docs/decisions.md#fairvfl-models).

A block is bound to its party's feature matrix. It returns the contribution
``u_k = g_k(theta_k; X^k)`` (float64 numpy, what is uploaded) and the vector-Jacobian product
``sum_i nu_i dg_k(theta_k; X_i^k)/dtheta_k`` used by [J](12); the regularizer
``mu theta_k`` is added by the party.

- ``LinearBlock``: ``g_k = X^k theta_k`` ([C] §III-A, [J] §3.1), ``theta^(0) = 0``.
- ``MLPBlock``: ``Linear(m_k, h1) -> ReLU -> Linear(h1, h2) -> ReLU -> Linear(h2, 1)`` ([J]
  §5.1 "2 hidden layers"; widths and activation: docs/decisions.md#fairvfl-mlp), PyTorch default
  init.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _party_rows(X):
    """``X`` as given, once it is scipy sparse or two-dimensional (rows, the party's columns):
    a 1-D party array used to fail with an IndexError in ``X.shape[1]`` (docs/usage.md
    promises a ValueError naming the argument).
    """
    if not sp.issparse(X) and np.ndim(X) != 2:
        raise ValueError(f"X must be two-dimensional (rows, the party's columns), got shape "
                         f"{tuple(np.shape(X))}; a party holding one column: X[:, None]")
    return X


class LinearBlock:
    """``g_k(theta; X) = X theta``; ``X`` dense or scipy sparse (one-hot columns)."""

    random_init = False  # init() draws nothing (theta = 0): FairVFL hands it no generator

    def __init__(self, X) -> None:
        self.X = _party_rows(X)
        self.dim = self.X.shape[1]
        # A sparse X is kept once as CSC, and (X^k)^T as the CSR view of the same arrays
        # (the products are the hot path): ``X @ theta`` by the CSC kernel is 2-3x faster on ADULT's
        # one-hot blocks than by CSR, and ``X.T @ nu`` on a CSR X built a CSC view per call (~40 %
        # of the VJP) and scattered. Every kernel sums an output's terms in the same order (a row's
        # X_ij theta_j over j ascending, a feature's nu_i X_ij over i ascending, each from 0),
        # so the results are bitwise scipy's CSR products (tests/fairvfl/
        # test_fairvfl_algorithm.py).
        self._Xc = self.X.tocsc() if sp.issparse(self.X) else None
        self._XT = None if self._Xc is None else self._Xc.T

    def init(self, generator=None) -> np.ndarray:
        return np.zeros(self.dim)

    def forward(self, theta: np.ndarray, X=None) -> np.ndarray:
        if X is None:
            X = self.X if self._Xc is None else self._Xc
        return np.asarray(X @ theta, dtype=np.float64)

    def vjp(self, theta: np.ndarray, nu: np.ndarray) -> np.ndarray:
        """``(X^k)^T nu = sum_i nu_i X_i^k`` (vectorized over samples)."""
        return np.asarray((self.X.T if self._XT is None else self._XT) @ nu, dtype=np.float64)

    def vjp_loop(self, theta: np.ndarray, nu: np.ndarray) -> np.ndarray:
        """The same sum as a per-sample loop: the equality oracle of the tests and the bench."""
        X = self.X.toarray() if sp.issparse(self.X) else self.X
        out = np.zeros(self.dim)
        for i in range(X.shape[0]):
            out += nu[i] * X[i]
        return out

    @staticmethod
    def sq_norm(theta: np.ndarray) -> float:
        return float(theta @ theta)

    @staticmethod
    def to_numpy(theta) -> np.ndarray:
        return np.asarray(theta, dtype=np.float64)


# rows per chunk of the MLP's passes: a chunk's activations and scratch (4 x 4096 x 32 floats,
# 2 MB in float32) stay in one core's L2 cache
_CHUNK_ROWS = 4096


class MLPBlock:
    """A two-hidden-layer ReLU network per party; parameters are one flat torch vector."""

    def __init__(self, X, widths: tuple[int, int] = (32, 32), dtype: str = "float64") -> None:
        import torch

        self.torch = torch
        self.dtype = getattr(torch, dtype)
        self.X = torch.as_tensor(np.asarray(_party_rows(X)), dtype=self.dtype)
        m = self.X.shape[1]
        self.shapes = [(widths[0], m), (widths[0],), (widths[1], widths[0]), (widths[1],),
                       (1, widths[1]), (1,)]
        self.fan_in = [m, m, widths[0], widths[0], widths[1], widths[1]]
        self.sizes = [int(np.prod(s)) for s in self.shapes]
        self.dim = sum(self.sizes)
        self._recorded = None  # the theta of the last forward on X (see forward)
        self._acts = None      # that pass's activations, and the backward's scratch

    def init(self, generator) -> object:
        """PyTorch's ``nn.Linear`` default: weights and biases ~ U(+-1/sqrt(fan_in))."""
        torch = self.torch
        parts = []
        for size, fan_in in zip(self.sizes, self.fan_in, strict=True):
            bound = 1.0 / np.sqrt(fan_in)
            u = torch.rand(size, generator=generator, dtype=torch.float64)
            parts.append(((2 * u - 1) * bound).to(self.dtype))
        return torch.cat(parts)

    def _net(self, theta, X):
        """The network by plain torch operations (autograd-traceable): the per-sample oracle
        :meth:`vjp_loop` and evaluation on new rows use it.
        """
        torch = self.torch
        W = self._weights(theta)
        h = torch.relu(X @ W[0].T + W[1])
        h = torch.relu(h @ W[2].T + W[3])
        return (h @ W[4].T + W[5])[:, 0]

    def _weights(self, theta):
        return [t.reshape(s) for t, s in zip(self.torch.split(theta, self.sizes), self.shapes,
                                             strict=True)]

    def _buffers(self):
        """The activations of the last pass on the party's own rows, kept across calls (a
        fresh 40000 x 32 tensor per layer and call was paged in anew each time), and the
        backward's scratch for one chunk of rows.
        """
        if self._acts is None:
            torch = self.torch
            n = self.X.shape[0]
            h1, h2 = self.shapes[0][0], self.shapes[2][0]
            r = min(n, _CHUNK_ROWS)
            self._acts = [torch.empty(n, h1, dtype=self.dtype),
                          torch.empty(n, h2, dtype=self.dtype),
                          torch.empty(n, 1, dtype=self.dtype),
                          torch.empty(r, h2, dtype=self.dtype),
                          torch.empty(r, h1, dtype=self.dtype)]
        return self._acts

    def _forward_own(self, theta):
        """``g(theta; X)`` on the party's own rows into the kept buffers:
        ``A1 = relu(X W0ᵀ + b0)``, ``A2 = relu(A1 W1ᵀ + b1)``, ``out = A2 W2ᵀ + b2``, a chunk
        of rows at a time (:data:`_CHUNK_ROWS`): a chunk's layers run while its activations
        are in the core's cache, so each activation is written once, not read back and
        written again by the ReLU and the next layer. A row's numbers do not depend on the
        chunk (the products treat rows alone).
        """
        torch = self.torch
        W = self._weights(theta)
        A1, A2, out, _, _ = self._buffers()
        W0, W1, W2 = W[0].T, W[2].T, W[4].T
        for lo in range(0, self.X.shape[0], _CHUNK_ROWS):
            hi = lo + _CHUNK_ROWS
            a1 = torch.addmm(W[1], self.X[lo:hi], W0, out=A1[lo:hi]).relu_()
            a2 = torch.addmm(W[3], a1, W1, out=A2[lo:hi]).relu_()
            torch.addmm(W[5], a2, W2, out=out[lo:hi])
        return out[:, 0]

    def forward(self, theta, X=None) -> np.ndarray:
        """``g(theta; X)``. On the party's own ``X`` the activations are kept, and the next
        :meth:`vjp` at the same ``theta`` (the next round's, for a passive party) reuses them
        instead of running the network again: one forward pass per step, not two.
        """
        torch = self.torch
        if X is not None:
            with torch.no_grad():
                Xt = torch.as_tensor(np.asarray(X), dtype=self.dtype)
                return self._net(theta, Xt).double().numpy()
        with torch.no_grad():
            out = self._forward_own(theta)
        self._recorded = theta
        return out.to(self.torch.float64, copy=True).numpy()

    def vjp(self, theta, nu: np.ndarray):
        """``sum_i nu_i d g(theta; X_i)/d theta`` by hand-written backpropagation on the kept
        activations (one reverse pass with cotangent ``nu``, no autograd graph)::

            dout = nu          dW2 = doutᵀ A2      db2 = sum dout
            dZ2 = (dout W2) * 1[A2 > 0]            dW1 = dZ2ᵀ A1   db1 = sum dZ2
            dZ1 = (dZ2 W1) * 1[A1 > 0]             dW0 = dZ1ᵀ X    db0 = sum dZ1

        a chunk of rows at a time (:data:`_CHUNK_ROWS`; ``dZ2``, ``dZ1`` of a chunk never
        leave the core's cache), each chunk's row sums added to the gradient. The kernels
        autograd runs for :meth:`_net`, summed in another order; the tests hold it to the
        per-sample loop :meth:`vjp_loop` within the bound of
        docs/design.md#tolerances-of-the-vectorized-paths (a bound on any order of the sums
        over the rows).
        """
        torch = self.torch
        with torch.no_grad():
            if self._recorded is not theta:
                self._forward_own(theta)
            self._recorded = None
            W = self._weights(theta)
            A1, A2, _, dZ2, dZ1 = self._buffers()
            g = torch.empty(self.dim, dtype=self.dtype)
            gW = [t.view(s) for t, s in zip(torch.split(g, self.sizes), self.shapes,
                                            strict=True)]
            dout = torch.as_tensor(nu, dtype=self.dtype).unsqueeze(1)
            relu_grad = torch.ops.aten.threshold_backward.grad_input
            for lo in range(0, self.X.shape[0], _CHUNK_ROWS):
                hi = min(lo + _CHUNK_ROWS, self.X.shape[0])
                d, a1, a2, x = dout[lo:hi], A1[lo:hi], A2[lo:hi], self.X[lo:hi]
                dz2 = torch.mm(d, W[4], out=dZ2[:hi - lo])
                relu_grad(dz2, a2, 0, grad_input=dz2)
                dz1 = torch.mm(dz2, W[2], out=dZ1[:hi - lo])
                relu_grad(dz1, a1, 0, grad_input=dz1)
                if lo == 0:
                    torch.mm(d.T, a2, out=gW[4])
                    torch.sum(d, dim=0, out=gW[5])
                    torch.mm(dz2.T, a1, out=gW[2])
                    torch.sum(dz2, dim=0, out=gW[3])
                    torch.mm(dz1.T, x, out=gW[0])
                    torch.sum(dz1, dim=0, out=gW[1])
                else:
                    gW[4].addmm_(d.T, a2)
                    gW[5].add_(d.sum(dim=0))
                    gW[2].addmm_(dz2.T, a1)
                    gW[3].add_(dz2.sum(dim=0))
                    gW[0].addmm_(dz1.T, x)
                    gW[1].add_(dz1.sum(dim=0))
        return g

    def vjp_loop(self, theta, nu: np.ndarray):
        """Per-sample loop of the same sum (test oracle)."""
        torch = self.torch
        total = torch.zeros_like(theta)
        for i in range(self.X.shape[0]):
            th = theta.detach().requires_grad_(True)
            out = self._net(th, self.X[i:i + 1])[0]
            (g,) = torch.autograd.grad(out, th)
            total += float(nu[i]) * g
        return total

    @staticmethod
    def sq_norm(theta) -> float:
        return float((theta.double() ** 2).sum())

    @staticmethod
    def to_numpy(theta) -> np.ndarray:
        return theta.detach().double().numpy().copy()
