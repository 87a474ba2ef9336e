"""More one-line bugs planted in ``repro/`` at other sites, in the style of the mechanisms of
test_theory_mechanisms.py (a stale iterate, an index off by one, a wrong scale on one block, a
dropped state update, a sign on one code path, and one more of each mechanism): each must fail
the check claiming the broken statement, through the named criterion.
"""

from __future__ import annotations

import numpy as np
import pytest

import repro.fairvfl.fair_vfl as fair_vfl
from repro.constrfl.proxal import FedProxAL
from repro.fairvfl.models import LinearBlock
from repro.fairvfl.parties import PassiveParty
from repro.fairvfl.problem import FairnessGroups
from repro.fedmm import federated, messages
from repro.fedmm.fedmm import FedMM
from repro.fedmm.local_gda import LocalGDA
from repro.relfair.client_batch import ClientEngine
from repro.relfair.problem import RelativeAmbiguitySet

pytestmark = pytest.mark.xdist_group("theory-claiming-checks")


def stale_passive_message(mp):
    """[J]: a passive party steps along the previous round's nu (a stale iterate)."""
    original = PassiveParty.local_update

    def planted(self, message, step):
        stale = getattr(self, "_stale", None)
        self._stale = message
        return original(self, message if stale is None else stale, step)
    mp.setattr(PassiveParty, "local_update", planted)


def eta3_exponent_off_by_one(mp):
    """(15) with eta3^(t + 1) (an index off by one in the decay)."""
    def planted(self):
        s = self.state
        t = s.round
        down = messages.Broadcast(t, s.theta0.clone())
        local = self.local_solver(down.theta0, t, self.eta, self.scale, self.mu, s.duals)
        duals = s.duals + self.mu * (local - down.theta0)
        c = self.config.eta3 if self.config.eta3_constant else self.config.eta3 ** (t + 1)
        shifted = local + (c / self.mu) * duals
        uploads = tuple(messages.Upload(i, shifted[i]) for i in range(self.n_clients))
        self.state = federated.FedState(t + 1, self.aggregate(uploads), local, duals)
        return messages.RoundMessages(t + 1, (down,), uploads)
    mp.setattr(FedMM, "step", planted)


def psi_step_doubled(mp):
    """Local GDA (12) with 2 eta2 on the psi block (a wrong scale on one block)."""
    original = LocalGDA.__call__

    def planted(self, theta0, t, eta, scale, mu, duals):
        d1 = int(self.oracle.sizes["omega"])
        eta = eta.clone()
        eta[d1:] *= 2
        return original(self, theta0, t, eta, scale, mu, duals)
    mp.setattr(LocalGDA, "__call__", planted)


def server_multiplier_not_updated(mp):
    """Algorithm 1 line 5 dropped: the server keeps mu_0^k (a dropped state update)."""
    original = FedProxAL.step

    def planted(self):
        mu0 = self.state.mu0.copy()
        out = original(self)
        self.state.mu0 = mu0
        return out
    mp.setattr(FedProxAL, "step", planted)


def steps_path_correction_sign(mp):
    """The per-step local SGD (the ``steps`` reading's path) with c_i - c for c - c_i."""
    original = ClientEngine._local_sgd_stacked

    def planted(self, theta, lr, draws, steps, correction, snapshot_at, active=None,
                term=None):
        if active is None and correction is not None:
            correction = tuple(-c for c in correction)
        return original(self, theta, lr, draws, steps, correction, snapshot_at, active, term)
    mp.setattr(ClientEngine, "_local_sgd_stacked", planted)


_W = RelativeAmbiguitySet.__dict__["w"].func


def w_without_its_scale(mp):
    """The ambiguity set's w without its 1/(1 - phi): the algorithm's dual step projects on
    the wrong set (a check reading w from the package would find it consistent).
    """
    mp.setattr(RelativeAmbiguitySet, "w", property(lambda self: (1 - self.phi) * _W(self)))


def weights_ignore_lam2(mp):
    """[J](12) weights with lam1 only (the primal step sees no lam2)."""
    mp.setattr(FairnessGroups, "weights",
               lambda self, lam: 1.0 / self.n + float(lam[0]) * self.coef)


def stop_without_tau_term(mp):
    """Stop test (11) without its beta tau_k term."""
    original = FedProxAL.step

    def planted(self):
        c, w_old = self.config, self.state.w.copy()
        mu_old = np.concatenate([self.state.mu0.ravel(), *(m.ravel() for m in self.state.mus)])
        out = original(self)
        s = self.state
        mu = np.concatenate([s.mu0.ravel(), *(m.ravel() for m in s.mus)])
        dw = float(np.max(np.abs(s.w - w_old)))
        s.stopped = dw <= c.beta * c.eps1 and float(np.max(np.abs(mu - mu_old))) \
            <= c.beta * c.eps2
        return out
    mp.setattr(FedProxAL, "step", planted)


def sparse_vjp_halved(mp):
    """The CSR kernel of a linear party's VJP off by a factor 2 (the dense kernel right)."""
    original = LinearBlock.vjp

    def planted(self, theta, nu):
        out = original(self, theta, nu)
        return 0.5 * out if self._XT is not None else out
    mp.setattr(LinearBlock, "vjp", planted)


def paper_eta_default(mp):
    """The linear model's default step eta_t = 50, not the papers' 100."""
    mp.setattr(fair_vfl, "PAPER_ETA", 50.0)


PLANTS = {
    "stale iterate: passive party's nu of the previous round": (
        stale_passive_message, "fairvfl.lemma1_primal_progress",
        "fairvfl:FairVFL/journal/LM-dense/Q=1"),
    "index off by one: eta3^(t+1)": (
        eta3_exponent_off_by_one, "fedmm.sec4_eta3", "fedmm:FedMM/vectorized/float64"),
    "wrong scale on one block: 2 eta2 on psi": (
        psi_step_doubled, "fedmm.theorem1_remark_fixed_point",
        "fedmm:FedMM/vectorized/float64"),
    "dropped state update: server multiplier": (
        server_multiplier_not_updated, "constrfl.lemma_a1_a2_iterates",
        "Lemma A.1: z^{k+1} = J(w^k + beta e^k, mu^k)"),
    "sign on one code path: steps-reading correction": (
        steps_path_correction_sign, "relfair.theorem3_convergence",
        "Alg. 1 lines 10-15 round, Scaff-PD-IA vectorized/steps/float32"),
    "reference from the package: w without 1/(1 - phi)": (
        w_without_its_scale, "relfair.theorem3_convergence",
        "Alg. 1 line 9 dual step, Scaff-PD-IA vectorized/epochs/float32"),
    "term that never bit: weights without lam2": (
        weights_ignore_lam2, "fairvfl.lemma1_primal_progress",
        "fairvfl:FairVFL/conf/LM-dense/Q=1"),
    "term that never bit: stop without beta tau_k": (
        stop_without_tau_term, "constrfl.theorem31_output",
        "stop = first k where (11) holds, paper/newton"),
    "one path checked: the CSR kernel": (
        sparse_vjp_halved, "fairvfl.lemma1_primal_progress",
        "fairvfl:FairVFL/conf/LM-csr/Q=1"),
    "the paper's hyperparameters: default eta_t = 50": (
        paper_eta_default, "fairvfl.lemma1_primal_progress",
        "paper's eta_t = 100 (the config's default)"),
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_another_planted_bug_fails_its_claiming_check(plant, monkeypatch, clean, run):
    apply, check, fragment = PLANTS[plant]
    assert clean(check).passed
    apply(monkeypatch)
    after = run(check)
    monkeypatch.undo()
    broken = {k: v for k, v in after.criteria.items() if fragment in k and v < 0}
    assert after.verdict == "fail" and broken, (plant, after.details.get("failed_because"))
