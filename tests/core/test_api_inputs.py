"""constrfl's public API: the problem builders check shapes, labels and the clients' row
layout with a ValueError naming the argument (they used to build a problem silently, or fail
later with a numpy broadcast error).
"""

from __future__ import annotations

import numpy as np
import pytest

from repro.constrfl import fairness, neyman_pearson


def _np_data(n=3, m0=8, m1=5, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, m0, d)), rng.normal(size=(n, m1, d))


def _fair_data(n=2, M=10, d=4, seed=0):
    rng = np.random.default_rng(seed)
    Xc = rng.normal(size=(n, M, d))
    Xc[..., -1] = rng.integers(0, 2, size=(n, M))
    Xs = rng.normal(size=(12, d))
    Xs[:, -1] = rng.integers(0, 2, size=12)
    return Xc, rng.integers(0, 2, size=(n, M)), Xs, rng.integers(0, 2, size=12)


def test_neyman_pearson_checks_shapes():
    X0, X1 = _np_data()
    assert neyman_pearson(X0, X1).clients[0].size == 3
    with pytest.raises(ValueError, match=r"X0 must be three-dimensional \(clients, rows, "
                                         r"features\), got shape \(8, 4\)"):
        neyman_pearson(X0[0], X1)
    with pytest.raises(ValueError, match=r"X1 must hold one block per client of X0 \(3\), got 2"):
        neyman_pearson(X0, X1[:2])
    with pytest.raises(ValueError, match=r"X1 must have 4 features \(as X0\), got 3"):
        neyman_pearson(X0, X1[..., :3])
    with pytest.raises(ValueError, match=r"r must be in"):
        neyman_pearson(X0, X1, r=float("nan"))


def test_fairness_checks_labels_shapes_and_the_sensitive_column():
    Xc, yc, Xs, ys = _fair_data()
    assert fairness(Xc, yc, Xs, ys).clients[0].size == 2
    with pytest.raises(ValueError, match=r"yc must hold labels in \{0, 1\}, got -1"):
        fairness(Xc, 2 * yc - 1, Xs, ys)
    with pytest.raises(ValueError, match=r"ys must hold labels in \{0, 1\}, got -1"):
        fairness(Xc, yc, Xs, 2 * ys - 1)
    with pytest.raises(ValueError, match=r"yc must have shape \(2, 10\) \(one label per row of "
                                         r"Xc\), got \(2, 9\)"):
        fairness(Xc, yc[:, :9], Xs, ys)
    with pytest.raises(ValueError, match=r"ys must have one entry per row of Xs \(12\), got 11"):
        fairness(Xc, yc, Xs, ys[:11])
    with pytest.raises(ValueError, match=r"Xs must have 4 features \(as Xc\), got 3"):
        fairness(Xc, yc, Xs[:, :3], ys)
    bad = Xc.copy()
    bad[0, 0, -1] = 0.5
    with pytest.raises(ValueError, match=r"Xc\[\.\.\., -1\] \(the sensitive attribute\) must "
                                         r"hold labels in \{0, 1\}, got 0\.5"):
        fairness(bad, yc, Xs, ys)


# ------------------------------------------- the shape checks docs/usage.md promises

def _quadratic(n=5, d=4, **over):
    from repro.constrfl import QuadraticBlock

    kw = dict(A=np.broadcast_to(np.eye(d), (n, d, d)), bvec=np.ones((n, d)), H=None,
              G=np.zeros((n, 0, d)), r=np.zeros((n, 0)))
    kw.update(over)
    return QuadraticBlock(d, **kw)


def test_linear_and_mlp_blocks_refuse_a_one_dimensional_party():
    from repro.fairvfl import LinearBlock, MLPBlock

    for block in (LinearBlock, MLPBlock):
        with pytest.raises(ValueError, match=r"^X must be two-dimensional .* got shape \(5,\)"):
            block(np.zeros(5))
    assert LinearBlock(np.zeros((5, 1))).dim == 1


@pytest.mark.parametrize(("arg", "value", "expected"), [
    ("A", np.zeros((5, 4, 3)), r"^A must have shape \(5, 4, 4\) .* got \(5, 4, 3\)"),
    ("A", np.zeros((4, 4)), r"^A must have shape \(5, 4, 4\) .* got \(4, 4\)"),
    ("bvec", np.zeros((3, 4)), r"^bvec must have shape \(5, 4\) .* got \(3, 4\)"),
    ("G", np.zeros((5, 1, 3)), r"^G must have shape \(\*, \*, 4\) .* got \(5, 1, 3\)"),
    ("r", np.zeros((5, 1)), r"^r must have shape \(5, 0\) .* got \(5, 1\)"),
    ("H", np.zeros((5, 4, 4)), r"^H must have shape \(5, 0, 4, 4\) .* got \(5, 4, 4\)"),
])
def test_quadratic_block_checks_every_shape(arg, value, expected):
    with pytest.raises(ValueError, match=expected):
        _quadratic(**{arg: value})


def test_logistic_block_checks_its_shapes():
    from repro.constrfl.blocks import LogisticBlock

    b, M, d = 2, 6, 3
    ok = dict(X=np.zeros((b, M, d)), y=np.zeros((b, M)), fw=np.ones((b, M)),
              Gw=np.ones((b, 1, M)), r=np.zeros((b, 1)))
    assert LogisticBlock(d, **ok).size == b
    with pytest.raises(ValueError, match=r"^y must have shape \(2, 6\) .* got \(2, 5\)"):
        LogisticBlock(d, **{**ok, "y": np.zeros((b, M - 1))})
    with pytest.raises(ValueError, match=r"^X must have shape \(\*, \*, 4\)"):
        LogisticBlock(d + 1, **ok)


def test_proxal_and_kkt_check_the_length_of_w():
    from repro.constrfl import CProxAL, Problem, ProxAL, ProxALConfig, ProxALInit, kkt_residuals

    server = _quadratic(1, 4, A=None, bvec=None, H=2 * np.eye(4)[None, None],
                        G=np.zeros((1, 1, 4)), r=np.full((1, 1), -1.0))
    problem = Problem(server, (_quadratic(),))
    for alg in (ProxAL, CProxAL):
        with pytest.raises(ValueError, match=r"^init.w must have shape \(4,\) .* got \(3,\)"):
            alg(problem, ProxALConfig(), init=ProxALInit(np.zeros(3)))
    with pytest.raises(ValueError, match=r"^w must have shape \(4,\) .* got \(5,\)"):
        kkt_residuals(problem, np.zeros(5), np.zeros((1, 1)), [np.zeros((5, 0))])
    with pytest.raises(ValueError, match=r"^clients\[0\] has d = 3, the server block d = 4"):
        Problem(server, (_quadratic(5, 3),))


@pytest.mark.parametrize("backend", ["vectorized", "loop"])
def test_fedmm_names_a_gradient_of_the_wrong_width(backend):
    from repro.fedmm import Block, FedMM, FedMMConfig

    class Narrow:  # returns the gradient of w only, forgetting psi's 2 entries
        n_clients = 4

        def batched(self, theta, t, m):
            return theta[:, :3]

        def client(self, i, theta_i, t, m):
            return theta_i[:3]

    blocks = (Block("omega", 3, eta=0.05, mu=1.0), Block("psi", 2, eta=0.05, mu=1.0))
    alg = FedMM(Narrow(), FedMMConfig(blocks, local_steps=2), backend=backend)
    want = r"\(4, 3\); expected \(4, 5\)" if backend == "vectorized" else r"\(3,\); expected \(5,\)"
    with pytest.raises(ValueError, match=r"^Narrow\.(batched|client\(0, \.\.\.\)) returned a "
                       r"gradient of shape " + want):
        alg.run(rounds=1)
