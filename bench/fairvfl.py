"""``make bench`` for Fair VFL: one round, vectorized vs the per-sample loop oracle
([cost](docs/decisions.md#fairvfl-cost)).

The oracle blocks compute ``u_k = X^k theta_k`` and ``(X^k)^T nu`` one sample at a time (the
same sums as the tests' equality oracle); the protocol around them is identical. Also reported:
the per-round cost of the vectorized round on each dataset and for the MLP (§12.1).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from bench.bounds import bound_seconds
from bench.harness import Target, benchmark, best_time, compare_timings
from repro.fairvfl.data import make_split
from repro.fairvfl.fair_vfl import FairVFL, FairVFLConfig
from repro.fairvfl.instances import linear_blocks
from repro.fairvfl.models import LinearBlock, MLPBlock
from repro.fairvfl.problem import VFLProblem


class LoopLinearBlock(LinearBlock):
    """``LinearBlock`` with per-sample loops (the oracle)."""

    def forward(self, theta, X=None):
        X = self.X if X is None else X
        return np.array([row @ theta for row in X])

    def vjp(self, theta, nu):
        return self.vjp_loop(theta, nu)


def _alg(sp, block_cls, roles, fair=True):
    problem = VFLProblem(linear_blocks(sp.X_train, sp.blocks, block_cls), sp.y_train,
                         sp.s_train)
    return FairVFL(problem, FairVFLConfig(eps=0.01, roles=roles, fair=fair))


class AutogradMLPBlock(MLPBlock):
    """``MLPBlock`` with the gradient by autograd through :meth:`MLPBlock._net` (a fresh
    forward with a graph per VJP): the form the hand-written backward replaced, the baseline
    of the MLP round.
    """

    def vjp(self, theta, nu):
        import torch

        th = theta.detach().requires_grad_(True)
        out = self._net(th, self.X)
        (g,) = torch.autograd.grad(out, th, grad_outputs=torch.as_tensor(nu, dtype=self.dtype))
        return g


def mlp_round_bound(blocks) -> float:
    """One [J] round of MLP parties (float32): per party one forward and one VJP on its N
    rows, ``2N(m h1 + h1 h2 + h2)`` and ``2N(h1 m + 2 h1 h2 + h2)`` flops (bench/bounds.py).
    """
    flops = 0
    for b in blocks:
        N, m = b.X.shape
        h1, h2 = b.shapes[0][0], b.shapes[2][0]
        flops += 2 * N * (m * h1 + h1 * h2 + h2) + 2 * N * (h1 * m + 2 * h1 * h2 + h2)
    return bound_seconds(flops=flops, dtype="float32")


def lm_round_bytes(alg) -> int:
    """The bytes an LM round must read: every party's X twice (forward and VJP)."""
    total = 0
    for p in alg.parties:
        X = p.block.X
        total += 2 * (X.data.nbytes + X.indices.nbytes if scipy.sparse.issparse(X)
                      else X.nbytes)
    return total


@benchmark("fairvfl.round", Target("one communication round",
    "vs the per-sample loop (LM) and the autograd VJP (MLP); no numeric target"))
def _round() -> list[dict]:
    rows = []
    for dataset, roles, smoke in (("compas", "journal", False), ("crime", "conf", False),
                                  ("adult", "conf", True)):
        sp = make_split(dataset, 0, version="journal" if roles == "journal" else "conf",
                        smoke=smoke)
        fast, loop = _alg(sp, LinearBlock, roles), _alg(sp, LoopLinearBlock, roles)
        label = f"LM round, {dataset}{' 5k' if smoke else ''} n={sp.n_train}, roles={roles}"
        rows.append(compare_timings(label, loop.step, fast.step, repeat=3))
        rows[-1]["bound_s"] = bound_seconds(bytes_=lm_round_bytes(fast))
    sp = make_split("adult", 0, version="journal")
    algs = [FairVFL(VFLProblem([cls(sp.X_train[:, b], (32, 32), "float32") for b in sp.blocks],
                               sp.y_train, sp.s_train),
                    FairVFLConfig(eta=2.0, roles="journal"), rng=0)
            for cls in (AutogradMLPBlock, MLPBlock)]
    rows.append(compare_timings(f"MLP 32-32 round, adult n={sp.n_train}, roles=journal "
                                "([J] Table 2's cells)", algs[0].step, algs[1].step, repeat=3))
    rows[-1]["bound_s"] = mlp_round_bound([p.block for p in algs[1].parties])
    return rows


@benchmark("fairvfl.per_round_cost", Target(
    "one communication round", "per-round costs (docs/decisions.md#fairvfl-cost); the 'ratio' "
    "compares two methods, not a loop with its vectorization"))
def _per_round_cost() -> list[dict]:
    """§12.1 per-round costs (vectorized only): baseline = Fair VFL, fast = FedBCD."""
    rows = []
    for dataset in ("adult", "compas", "crime"):
        sp = make_split(dataset, 0)
        fair, fed = _alg(sp, LinearBlock, "conf"), _alg(sp, LinearBlock, "conf", fair=False)
        rows.append({"case": f"LM [C] roles, {dataset} n={sp.n_train}: FairVFL vs FedBCD",
                     "baseline_s": best_time(fair.step, 20), "fast_s": best_time(fed.step, 20)})
    sp = make_split("compas", 0, version="journal")
    mlp = FairVFL(VFLProblem([MLPBlock(sp.X_train[:, b], (32, 32), "float32")
                              for b in sp.blocks], sp.y_train, sp.s_train),
                  FairVFLConfig(eta=2.0, roles="journal"), rng=0)
    lm = _alg(sp, LinearBlock, "journal")
    rows.append({"case": f"[J] roles, compas n={sp.n_train}: MLP 32-32 vs LM",
                 "baseline_s": best_time(mlp.step, 5), "fast_s": best_time(lm.step, 20)})
    return rows


class CSRLinearBlock(LinearBlock):
    """``LinearBlock`` with scipy's CSR products, as a plain block computes them (a CSC view
    of ``X.T`` built per VJP): the same sums in the same order, bitwise equal
    (tests/fairvfl/test_fairvfl_algorithm.py), kept here as the timing baseline.
    """

    def forward(self, theta, X=None):
        return np.asarray((self.X if X is None else X) @ theta, dtype=np.float64)

    def vjp(self, theta, nu):
        return np.asarray(self.X.T @ nu, dtype=np.float64)


@benchmark("fairvfl.paper_round", Target(
    "one communication round of the paper-scale ADULT cells (sparse one-hot blocks, as "
    "experiments/_run.py builds them)", "the stored CSC / CSR-transpose products against "
    "scipy's CSR products; bitwise the same round, no numeric target"))
def _paper_round() -> list[dict]:
    from repro.fairvfl.experiments._run import _maybe_sparse

    sp = make_split("adult", 0, version="conf")
    rows = []
    for roles in ("conf", "journal"):
        algs = [FairVFL(VFLProblem([cls(_maybe_sparse(sp.X_train[:, b])) for b in sp.blocks],
                                   sp.y_train, sp.s_train),
                        FairVFLConfig(eps=0.01, roles=roles)) for cls in (CSRLinearBlock,
                                                                          LinearBlock)]
        rows.append(compare_timings(f"LM round, adult n={sp.n_train}, roles={roles}",
                                    algs[0].step, algs[1].step, repeat=20))
    return rows
