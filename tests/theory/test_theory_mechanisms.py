"""One planted bug per mechanism by which a theory check could pass a broken package: each is a
new one-line bug in ``repro/`` (monkeypatched here, never in ``theory/``, never a flag), and the
check that CLAIMS the broken statement must fail at small size through the criterion that names
it (its margin asserted negative; clean, the same criterion's margin is >= 0).

1. A reference read from the package: Scaff-PD-IA never updates its previous losses L^{r-1}
   after the first round. A check taking L^{r-1} from the algorithm's state finds the dual step
   consistent with it; Thm 3's check computes L^{r-1} from its own record of theta^{r-1}.
2. A hypothesis asserted on the check's own copy: Fair VFL takes round t's primal step from
   Theorem 2's schedule one round ahead (eta_{t+1}). A check that computes eta_t itself and
   builds (19)/(20) from it passes; Theorem 2's check measures the step the package applied.
3. One code path checked, another run: the vectorized per-epoch schedule (the experiments'
   primary ``epochs`` reading) lets every client take one local step fewer. The loop backend
   and the ``steps`` reading are untouched; Thm 3's check drives the experiments' path.
4. A term that never bites: FedMM's dual step (13)-(14) uses the omega block's penalty mu1 on
   every coordinate. With mu1 = mu2 this is the identity; the Lemmas 5-8 check runs with
   distinct penalties.
5. The paper's own hyperparameters never checked: the package's paper preset of FedMM builds
   its blocks with eta = 0.02 instead of Sec. 6's 0.01. Every instance with explicit steps is
   unaffected; the fixed-point check runs the paper preset and holds it to Sec. 6's constants.
"""

from __future__ import annotations

import dataclasses

import pytest

import repro.fedmm.blocks as fedmm_blocks
from repro.fairvfl.fair_vfl import FairVFL
from repro.fedmm import federated, messages
from repro.fedmm.fedmm import FedMM
from repro.relfair.client_batch import ClientEngine
from repro.relfair.scaff_pd_ia import ScaffPDIA

pytestmark = pytest.mark.xdist_group("theory-claiming-checks")


def stale_previous_losses(mp):
    original = ScaffPDIA.step

    def planted(self):
        kept = self.state.prev_losses
        out = original(self)
        if kept is not None:   # the state update of L^{r-1} dropped after round 1
            self.state = dataclasses.replace(self.state, prev_losses=kept)
        return out
    mp.setattr(ScaffPDIA, "step", planted)


def schedule_one_round_ahead(mp):
    original = FairVFL.step

    def planted(self):
        cfg = self.config
        if cfg.eta_schedule is not None:
            self.config = dataclasses.replace(
                cfg, eta_schedule=lambda t, f=cfg.eta_schedule: f(t + 1))
        try:
            return original(self)
        finally:
            self.config = cfg
    mp.setattr(FairVFL, "step", planted)


def epochs_one_step_short(mp):
    original = ClientEngine._local_sgd_scheduled

    def planted(self, theta, lr, draws, steps, correction, snapshot_at, active, term=None):
        return original(self, theta, lr, draws, steps, correction, snapshot_at,
                        (active - 1).clamp(min=0), term)
    mp.setattr(ClientEngine, "_local_sgd_scheduled", planted)


def dual_step_with_mu1_everywhere(mp):
    def planted(self):
        s = self.state
        t = s.round
        down = messages.Broadcast(t, s.theta0.clone())
        local = self.local_solver(down.theta0, t, self.eta, self.scale, self.mu, s.duals)
        duals = s.duals + self.mu[0] * (local - down.theta0)   # mu1 on every block
        c = self.config.eta3 if self.config.eta3_constant else self.config.eta3 ** t
        shifted = local + (c / self.mu) * duals
        uploads = tuple(messages.Upload(i, shifted[i]) for i in range(self.n_clients))
        self.state = federated.FedState(t + 1, self.aggregate(uploads), local, duals)
        return messages.RoundMessages(t + 1, (down,), uploads)
    mp.setattr(FedMM, "step", planted)


def paper_preset_eta(mp):
    mp.setattr(fedmm_blocks, "PAPER_ETA", 0.02)


MECHANISMS = {
    "1 reference read from the package": (
        stale_previous_losses, "relfair.theorem3_convergence",
        "Alg. 1 line 9 dual step, Scaff-PD-IA vectorized/epochs/float32"),
    "2 hypothesis on the check's own copy": (
        schedule_one_round_ahead, "fairvfl.theorem2_rate_gap_bounds",
        "hypothesis: the Fair VFL round [C](9)-(11) = [J](10)-(14) with this round's "
        "eta_t, c_t, fairvfl:FairVFL/conf/LM-dense/Q>1"),
    "3 one code path checked, another run": (
        epochs_one_step_short, "relfair.theorem3_convergence",
        "Alg. 1 lines 10-15 round, Scaff-PD-IA vectorized/epochs/float32"),
    "4 a term that never bites": (
        dual_step_with_mu1_everywhere, "fedmm.lemmas5_8",
        "Algorithm 3 round (11)-(16), fedmm:FedMM/exact/float64"),
    "5 the paper's own hyperparameters": (
        paper_preset_eta, "fedmm.theorem1_remark_fixed_point",
        "hypothesis: the paper's eta = 0.01, mu = 1, M = 20 (Sec. 6), fedmm:FedMM/paper preset"),
}


@pytest.mark.parametrize("mechanism", sorted(MECHANISMS))
def test_a_planted_bug_fails_the_claiming_check_by_its_criterion(mechanism, monkeypatch,
                                                                 clean, run):
    plant, check, criterion = MECHANISMS[mechanism]
    before = clean(check)
    assert before.passed and before.criteria[criterion] >= 0, (check, before.criteria)
    plant(monkeypatch)
    after = run(check)
    monkeypatch.undo()
    assert after.verdict == "fail", (mechanism, after.verdict)
    assert after.criteria[criterion] < 0, (mechanism, after.criteria[criterion])
    assert after.worst_margin <= after.criteria[criterion]


def test_the_path_plant_leaves_the_other_paths_untouched(monkeypatch, run):
    """Mechanism 3's bug lives on the scheduled path only: the ``steps`` reading's rounds are
    still the closed form (so a check driving only that path would pass).
    """
    epochs_one_step_short(monkeypatch)
    after = run("relfair.theorem3_convergence")
    for method in ("Scaff-PD-IA", "Scaff-PD", "Scaffold"):
        assert after.criteria[f"Alg. 1 lines 10-15 round, {method} vectorized/steps/float32"] > 0
        assert after.criteria[f"Alg. 1 lines 10-15 round, {method} vectorized/epochs/float32"] < 0
