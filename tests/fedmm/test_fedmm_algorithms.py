"""FedMM (Alg. 3) and the baselines on hand-computed and quadratic examples."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repro.fedmm.blocks import Block
from repro.fedmm.fedavg_gda import FedAvgGDA, FedAvgGDAConfig
from repro.fedmm.fedmm import FedMM, FedMMConfig
from repro.fedmm.fedprox_gda import FedProxGDA, FedProxGDAConfig
from repro.fedmm.fedsgda import FedSGDA, FedSGDAConfig
from repro.fedmm.instances import ExactLocalSolver, QuadOracle, gen_Q
from repro.fedmm.local_gda import LocalGDA
from repro.fedmm.messages import Broadcast, RoundMessages, Upload, message_fields
from repro.fedmm.methods import METHODS, build

F64 = torch.float64


class Affine:
    """G_i(theta) = K_i theta + k_i for scalar omega and psi (hand-computable)."""

    def __init__(self, K, k):
        self.K = torch.tensor(K, dtype=F64)
        self.k = torch.tensor(k, dtype=F64)
        self.n_clients = len(K)
        self.calls = 0

    def batched(self, theta, t, m):
        self.calls += 1
        return torch.einsum("nij,nj->ni", self.K, theta) + self.k

    def client(self, i, theta_i, t, m):
        return self.K[i] @ theta_i + self.k[i]


K2 = [[[2.0, 1.0], [-1.0, 3.0]], [[0.5, -2.0], [2.0, 1.0]]]
k2 = [[1.0, -1.0], [-3.0, 2.0]]


def _blocks(eta=0.1, mu=2.0):
    return (Block("omega", 1, eta, mu), Block("psi", 1, eta, mu))


def G(i, th):
    (a, b), (c, d) = K2[i]
    return np.array([a * th[0] + b * th[1] + k2[i][0], c * th[0] + d * th[1] + k2[i][1]])


def test_fedmm_two_rounds_by_hand():
    """(11)-(16) with M = 2, eta = 0.1, mu = 2, eta3 base 0.5, computed in plain numpy."""
    eta, mu, base, M = 0.1, 2.0, 0.5, 2
    th0 = np.array([0.3, -0.2])
    duals = [np.zeros(2), np.zeros(2)]
    for t in range(2):
        ups = []
        for i in range(2):
            th = th0.copy()
            for _ in range(M):
                th = th - eta * (G(i, th) + mu * (th - th0) + duals[i])
            duals[i] = duals[i] + mu * (th - th0)
            ups.append(th + (base ** t / mu) * duals[i])
        th0 = (ups[0] + ups[1]) / 2
    alg = FedMM(Affine(K2, k2), FedMMConfig(_blocks(eta, mu), local_steps=M, eta3=base),
                init=torch.tensor([0.3, -0.2], dtype=F64))
    assert torch.count_nonzero(alg.state.duals) == 0  # lambda^0 = beta^0 = 0
    alg.run(2)
    np.testing.assert_allclose(alg.state.theta0.numpy(), th0, rtol=0, atol=1e-14)
    np.testing.assert_allclose(alg.state.duals.numpy(), np.stack(duals), rtol=0, atol=1e-14)


def test_duals_updated_by_13_14_and_upload_by_15():
    inst = gen_Q(3, N=3, d1=3, d2=2)
    alg = build("FedMM", QuadOracle(inst), init=torch.zeros(5, dtype=F64),
                blocks=(Block("omega", 3, 0.05, 1.5), Block("psi", 2, 0.05, 1.5)),
                local_steps=4, eta3=0.9)
    for t in range(4):
        d_before = alg.state.duals.clone()
        msgs = alg.step()
        s = alg.state
        expected = d_before + 1.5 * (s.local - msgs.broadcast.theta0)
        assert torch.equal(s.duals, expected)
        for u in msgs.uploads:
            torch.testing.assert_close(u.theta, s.local[u.client] + 0.9 ** t / 1.5
                                       * s.duals[u.client], rtol=0, atol=1e-15)


def test_duals_never_uploaded():
    inst = gen_Q(1, N=2, d1=3, d2=2)
    alg = build("FedMM", QuadOracle(inst), init=torch.zeros(5, dtype=F64),
                blocks=(Block("omega", 3, 0.05, 1.0), Block("psi", 2, 0.05, 1.0)),
                local_steps=3)
    for _ in range(3):
        msgs = alg.step()
        assert message_fields(msgs.broadcast) == ("round", "theta0")
        for u in msgs.uploads:
            assert isinstance(u, Upload)
            assert message_fields(u) == ("client", "theta")
            assert u.theta.shape == (5,)
            # the payload is theta_i^{t+}, never lambda_i / beta_i themselves
            assert not torch.allclose(u.theta, alg.state.duals[u.client])
    assert isinstance(msgs.broadcast, Broadcast)
    # the core protocol's view of the same round: round 3 (1-based), one broadcast down, the
    # uploads up in client order
    assert isinstance(msgs, RoundMessages) and msgs.round == 3 and msgs.broadcast.round == 2
    assert msgs.downlink == (msgs.broadcast,) and msgs.uplink == msgs.uploads
    assert [u.client for u in msgs.uplink] == [0, 1]


def test_equal_weight_averaging():
    uploads = (Upload(0, torch.tensor([1.0, 4.0])), Upload(1, torch.tensor([3.0, -2.0])),
               Upload(2, torch.tensor([2.0, 1.0])))
    assert torch.equal(FedMM.aggregate(uploads), torch.tensor([2.0, 1.0]))
    inst = gen_Q(2, N=3, d1=3, d2=2)
    for name in ("FedMM", "FedAvgGDA", "FedProxGDA", "FedSGDA"):
        alg = build(name, QuadOracle(inst), init=torch.zeros(5, dtype=F64),
                    blocks=(Block("omega", 3, 0.05, 1.0), Block("psi", 2, 0.05, 1.0)),
                    local_steps=2)
        msgs = alg.step()
        mean = sum(u.theta for u in msgs.uploads) / 3
        torch.testing.assert_close(alg.state.theta0, mean, rtol=0, atol=1e-15)


def test_fedsgda_is_fedavg_with_one_step_and_a_server_gradient_step():
    inst = gen_Q(4, N=4, d1=3, d2=2)
    blocks = (Block("omega", 3, 0.07, 1.0), Block("psi", 2, 0.03, 1.0))
    th = torch.linspace(-1, 1, 5, dtype=F64)
    sgda = FedSGDA(QuadOracle(inst), FedSGDAConfig(blocks), init=th)
    avg = FedAvgGDA(QuadOracle(inst), FedAvgGDAConfig(blocks, local_steps=1), init=th)
    K, k = inst.K(), inst.k()
    ref = th.numpy().copy()
    eta = np.array([0.07] * 3 + [0.03] * 2)
    for _ in range(5):
        sgda.step()
        avg.step()
        assert torch.equal(sgda.state.theta0, avg.state.theta0)
        # server: w <- w - eta1 mean grad_w f_i ; psi <- psi + eta2 mean grad_psi f_i
        ref = ref - eta * np.mean(K @ ref + k, axis=0)
        np.testing.assert_allclose(sgda.state.theta0.numpy(), ref, rtol=0, atol=1e-13)


def test_fedprox_one_step_by_hand():
    eta, mu = 0.1, 2.0
    th0 = np.array([0.3, -0.2])
    ups = []
    for i in range(2):
        th = th0.copy()
        for _ in range(2):
            th = th - eta * (G(i, th) + mu * (th - th0))
        ups.append(th)
    alg = FedProxGDA(Affine(K2, k2), FedProxGDAConfig(_blocks(eta, mu), local_steps=2),
                     init=torch.tensor(th0, dtype=F64))
    alg.step()
    np.testing.assert_allclose(alg.state.theta0.numpy(), (ups[0] + ups[1]) / 2, atol=1e-15)
    assert alg.state.duals is None


def test_vectorized_equals_loop_backend():
    inst = gen_Q(5, N=3, d1=3, d2=2)
    blocks = (Block("omega", 3, 0.05, 1.0), Block("psi", 2, 0.05, 1.0))
    for name in ("FedMM", "FedAvgGDA", "FedProxGDA"):
        a = build(name, QuadOracle(inst), init=torch.zeros(5, dtype=F64), blocks=blocks,
                  local_steps=5)
        b = build(name, QuadOracle(inst), init=torch.zeros(5, dtype=F64), blocks=blocks,
                  local_steps=5, backend="loop")
        a.run(5)
        b.run(5)
        torch.testing.assert_close(a.state.theta0, b.state.theta0, rtol=0, atol=1e-13)


def test_fedmm_exact_reaches_the_global_saddle():
    inst = gen_Q(0, N=2, d1=3, d2=2)
    alg = FedMM(QuadOracle(inst), FedMMConfig((Block("omega", 3, 1.0, 2.0),
                                               Block("psi", 2, 1.0, 2.0))),
                local_solver=ExactLocalSolver(inst))  # init=None: theta0^0 = 0
    alg.run(1500)
    np.testing.assert_allclose(alg.state.theta0.numpy(), inst.saddle(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(alg.state.duals.sum(0).numpy(), 0.0, atol=1e-10)


@pytest.mark.parametrize("kwargs, match", [
    ({"name": "b", "size": 0, "eta": 0.1}, "b.size"),
    ({"name": "b", "size": 1, "eta": 0.0}, "b.eta"),
    ({"name": "b", "size": 1, "eta": 0.1, "mu": -1.0}, "b.mu"),
    ({"name": "b", "size": 1, "eta": 0.1, "scale": 0.0}, "b.scale"),
])
def test_block_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Block(**kwargs)


def test_config_validation():
    with pytest.raises(ValueError, match="eta3"):
        FedMMConfig(_blocks(), eta3=1.5)
    with pytest.raises(ValueError, match="mu"):
        FedMMConfig((Block("omega", 1, 0.1, 0.0),))
    with pytest.raises(ValueError, match="local_steps"):
        LocalGDA(Affine(K2, k2), 0)
    with pytest.raises(ValueError, match="backend"):
        LocalGDA(Affine(K2, k2), 1, backend="gpu")
    with pytest.raises(ValueError, match="local_steps must be an int >= 1, got 0"):
        FedAvgGDAConfig(_blocks(), local_steps=0)
    with pytest.raises(ValueError, match="local_steps must be an int >= 1, got 2.5"):
        FedMMConfig(_blocks(), local_steps=2.5)
    with pytest.raises(ValueError, match="blocks must be non-empty"):
        FedSGDAConfig(())
    with pytest.raises(ValueError, match="Block objects"):
        FedProxGDAConfig(({"name": "omega"},))
    with pytest.raises(ValueError, match="method must be one of"):
        build("FedAdam", Affine(K2, k2), blocks=_blocks(), local_steps=1)
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['local_step'\]"):
        build("FedMM", Affine(K2, k2), blocks=_blocks(), local_step=1)
    with pytest.raises(ValueError, match="does not state its coordinate split"):
        build("FedMM", Affine(K2, k2))  # no blocks= and no problem.sizes
    with pytest.raises(ValueError, match="theta0"):
        FedMM(Affine(K2, k2), FedMMConfig(_blocks(), local_steps=1),
              init=torch.zeros(3, dtype=F64))


def test_numpy_theta0_is_accepted_and_gives_the_torch_run():
    """A numpy theta0 works (float64 kept, float32 kept) and the state holds
    torch tensors of that dtype; a non-numeric theta0 is a ValueError naming it.
    """
    import numpy as np

    from repro.fedmm.blocks import Block
    from repro.fedmm.instances import QuadOracle, gen_Q
    from repro.fedmm.methods import build

    inst = gen_Q(0, N=2, d1=3, d2=2)
    blocks = (Block("omega", 3, 0.05, 1.0), Block("psi", 2, 0.05, 1.0))
    start = np.linspace(-1, 1, 5)
    a = build("FedMM", QuadOracle(inst), init=start, blocks=blocks, local_steps=3)
    b = build("FedMM", QuadOracle(inst), init=torch.from_numpy(start.copy()), blocks=blocks,
              local_steps=3)
    sa, sb = a.run(4), b.run(4)
    assert sa.theta0.dtype == torch.float64 and torch.equal(sa.theta0, sb.theta0)
    assert torch.equal(sa.duals, sb.duals)
    assert isinstance(sa.theta0.numpy(), np.ndarray)
    assert build("FedAvgGDA", QuadOracle(inst), init=start.astype(np.float32), blocks=blocks,
                 local_steps=1).state.theta0.dtype == torch.float32
    with pytest.raises(ValueError, match="theta0 must be a real vector"):
        build("FedMM", QuadOracle(inst), init=np.array(["a"] * 5), blocks=blocks,
              local_steps=1)


def test_methods_build_each_algorithm_as_its_own_constructor():
    """repro/fedmm/methods/ holds one module per method; build(name, problem, **options) gives
    the same iterates as the algorithm's own class and config (FedSGDA: one local step whatever
    local_steps; only FedMM reads eta3).
    """
    inst = gen_Q(1, N=3, d1=3, d2=2)
    blocks = (Block("omega", 3, 0.05, 1.5), Block("psi", 2, 0.05, 1.5))
    th = torch.zeros(5, dtype=F64)
    # the paper's four are among the registered methods (a new method file adds one)
    known = {"FedMM": "fedmm", "FedAvgGDA": "fedavg_gda", "FedProxGDA": "fedprox_gda",
             "FedSGDA": "fedsgda"}
    assert set(known) <= set(METHODS)
    assert {n: METHODS[n].module for n in known} == {
        n: f"repro.fedmm.methods.{m}" for n, m in known.items()}
    direct = {
        "FedMM": FedMM(QuadOracle(inst), FedMMConfig(blocks, local_steps=4, eta3=0.9), init=th),
        "FedAvgGDA": FedAvgGDA(QuadOracle(inst), FedAvgGDAConfig(blocks, 4), init=th),
        "FedProxGDA": FedProxGDA(QuadOracle(inst), FedProxGDAConfig(blocks, 4), init=th),
        "FedSGDA": FedSGDA(QuadOracle(inst), FedSGDAConfig(blocks), init=th),
    }
    for name, alg in direct.items():
        built = build(name, QuadOracle(inst), init=th, blocks=blocks, local_steps=4, eta3=0.9)
        assert type(built) is type(alg) and built.config == alg.config
        assert built.local_solver.local_steps == (1 if name == "FedSGDA" else 4)
        for _ in range(3):
            built.step()
            alg.step()
        assert torch.equal(built.state.theta0, alg.state.theta0), name


def test_default_config_is_the_papers_and_init_defaults_to_zero():
    """configure(problem) with no option: the problem's omega/psi split with Sec. 6's eta = 0.01,
    mu = 1, M = 20 (FedSGDA: 1), eta3 = 1; init=None starts at theta0^0 = 0 in float64.
    """
    from repro.fedmm.methods import tiny_problem

    problem = tiny_problem(3)
    for name in ("FedMM", "FedAvgGDA", "FedProxGDA", "FedSGDA"):
        method = METHODS[name]
        cfg = method.configure(problem)
        assert cfg.blocks == (Block("omega", 3, 0.01, 1.0), Block("psi", 2, 0.01, 1.0))
        assert getattr(cfg, "local_steps", 1) == (1 if name == "FedSGDA" else 20)
        alg = method.build(problem)
        assert torch.equal(alg.state.theta0, torch.zeros(5, dtype=F64))
        assert torch.equal(alg.state.local, torch.zeros(2, 5, dtype=F64))
    assert METHODS["FedMM"].configure(problem).eta3 == 1.0


def test_run_calls_back_with_round_state_messages_and_stops():
    inst = gen_Q(1, N=2, d1=3, d2=2)
    alg = build("FedMM", QuadOracle(inst), local_steps=2)
    seen = []
    state = alg.run(3, callback=lambda r, s, m: seen.append((r, s.round, m.round,
                                                            m.broadcast.round)))
    assert seen == [(1, 1, 1, 0), (2, 2, 2, 1), (3, 3, 3, 2)] and state is alg.state
    assert alg.run(10, stop=lambda s: s.round >= 5).round == 5
    with pytest.raises(ValueError, match="needs rounds= or stop="):
        alg.run()
    with pytest.raises(ValueError, match="one Broadcast"):
        RoundMessages(1, (), ())
