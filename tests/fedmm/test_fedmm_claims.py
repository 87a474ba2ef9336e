"""The Figs. 2/4/5 claims on constructed records with known answers
(repro.fedmm.experiments.claims).
"""

import math

import pytest

from repro.engine.records.records import RunRecord
from repro.fedmm.experiments import budgets as B
from repro.fedmm.experiments import claims as C
from repro.fedmm.experiments import tables as T

ROUNDS_SG = [200 * k for k in range(1, 16)]  # FedSGDA evaluated every 200 rounds up to 3000
ROUNDS_MM = [10 * k for k in range(1, 16)]


def _rec(seed, da="DANN", algorithm="FedMM", M=20, p=1.0, final=0.5, curve=None, rounds=None,
         full=None, clients=None):
    cfg = {"da": da, "algorithm": algorithm, "local_steps": M, "p": p, "seed": seed}
    if clients:
        cfg["clients"] = clients
    rounds = rounds or (ROUNDS_SG if algorithm == "FedSGDA" else ROUNDS_MM)
    curve = curve if curve is not None else [final] * len(rounds)
    return RunRecord(experiment="fedmm.test", config=cfg, key=f"{seed}{algorithm}{M}{p}",
                     seed=seed, metrics={"final_acc": final, "test_acc_full":
                                         final if full is None else full},
                     curves={"round": rounds, "acc": curve})


def test_spread_and_judge():
    assert math.isclose(C.spread((1, [1, 2, 3]), (1, [2, 2, 2])), 1.0, abs_tol=1e-15)
    assert math.isclose(C.spread((0.5, [1, 3]), (1, [0, 0])), 0.5 * math.sqrt(2), abs_tol=1e-15)
    assert math.isnan(C.spread((1, [1.0]), (1, [2.0])))
    assert C.judge(2.0, 1.0) is True and C.judge(-2.0, 1.0) is False
    assert C.judge(0.5, 1.0) is None and C.judge(-0.99, 1.0) is None
    assert C.judge(0.1, float("nan")) is True  # one seed: the sign decides
    assert C.combine([True, None]) is None and C.combine([True, False, None]) is False
    assert C.combine([True, True]) is True and C.combine([]) is False


def _fig4(mm_finals, sg_curve):
    recs = [_rec(s, final=f) for s, f in enumerate(mm_finals)]
    recs += [_rec(s, algorithm="FedSGDA", M=1, final=sg_curve[-1], curve=sg_curve)
             for s in range(len(mm_finals))]
    return recs


def test_sgda_rounds_level_is_fedmm_final_and_never_reached_is_censored_evidence():
    # FedSGDA ends at 0.40; FedMM at 0.60. The old level 0.98 min(...) = 0.392 is reached at
    # round 200; FedMM's level 0.588 is never reached: censored (> 3000), a pass.
    sg = [0.40] * 15
    v, text = C.claim_fig4_sgda_rounds(_fig4([0.6, 0.6, 0.6], sg))
    assert v is True
    assert "X = 0.98 x final(FedMM) = 58.8%" in text
    assert "> 3000 (not reached: censored)" in text and "counts as evidence" in text


def test_sgda_rounds_fails_when_reached_before_1000_and_exact_round_reported():
    sg = [0.30, 0.45, 0.62, 0.62] + [0.62] * 11   # reaches 0.588 at round 600
    v, text = C.claim_fig4_sgda_rounds(_fig4([0.6, 0.6, 0.6], sg))
    assert v is False and "reaches X at round 600" in text
    assert "margin -3.2 pp" in text  # 0.588 - 0.62


def test_sgda_rounds_inconclusive_within_fedmm_seed_spread():
    # FedMM finals 0.4, 0.6, 0.8 (sd 0.2, spread 0.196); FedSGDA best 0.50 < X = 0.588
    v, text = C.claim_fig4_sgda_rounds(_fig4([0.4, 0.6, 0.8], [0.5] * 15))
    assert v is None and "seed spread 19.6 pp -> inconclusive" in text


def test_saving_and_m25_report_spread_and_judge():
    mm = [_rec(s, final=0.5, curve=[0.1] * 4 + [0.5] * 11) for s in range(3)]  # X hit at 50
    mm25 = [_rec(s, M=25, final=0.5, curve=[0.1] * 2 + [0.5] * 13) for s in range(3)]  # at 30
    sg = [_rec(s, algorithm="FedSGDA", M=1, final=0.5, curve=[0.1] * 9 + [0.5] * 6)
          for s in range(3)]  # at 2000
    v, text = C.claim_fig4_saving(mm + mm25 + sg)
    assert v is True and "saving 97.5%" in text            # 1 - 50/2000
    v, text = C.claim_fig4_m25(mm + mm25 + sg)
    assert v is True and "difference 20 rounds" in text
    slow25 = [_rec(s, M=25, final=0.5, curve=[0.1] * 6 + [0.5] * 9) for s in range(3)]
    assert C.claim_fig4_m25(mm + slow25 + sg)[0] is False


def _fig2(vals):
    return [_rec(s, da="CDAN", algorithm="FedAvgGDA", p=p, final=a)
            for p, accs in vals.items() for s, a in enumerate(accs)]


def test_fig2_as_worded_passes_while_the_monotone_reading_fails():
    recs = _fig2({0.5: [0.55, 0.56, 0.54], 0.75: [0.58, 0.59, 0.57], 1.0: [0.44, 0.45, 0.43]})
    v, text = C.claim_fig2(recs)
    assert v is True and "acc(p=0.5) - acc(p=1) = 11.0 pp, seed spread 1.4 pp" in text
    v, text = C.claim_fig2_monotone(recs)
    assert v is False and "p=0.5->0.75: change +3.0 pp (spread 1.4 pp, fail)" in text


def test_fig2_inconclusive_within_noise():
    recs = _fig2({0.5: [0.50, 0.60, 0.55], 1.0: [0.48, 0.58, 0.53]})
    assert C.claim_fig2(recs)[0] is None and C.claim_fig2_monotone(recs)[0] is None


def test_fig5_per_client_setting():
    recs = []
    for setting, gap in (("1+1", 0.25), ("2+2", 0.05)):
        for s in range(3):
            recs += [_rec(s, algorithm="FedMM", final=0.5 + gap + 0.001 * s, clients=setting),
                     _rec(s, algorithm="FedAvgGDA", final=0.5, clients=setting),
                     _rec(s, algorithm="FedProxGDA", final=0.49, clients=setting)]
    v, text = C.claim_fig5(recs)
    assert v is False
    assert "1+1 clients, DANN: " in text and "gap 25.1 pp (need > 20)" in text
    assert "2+2 clients, DANN: " in text and "gap 5.1 pp" in text
    assert C.claim_fig5([r for r in recs if r.config["clients"] == "1+1"])[0] is True


def test_a_claim_its_records_cannot_decide_is_missing_not_failed():
    """The extended records once at hand held FedMM runs only for Fig. 5 and judged its
    claim `fail`; records that lack an arm raise RecordsMissing (the claim is not_run).
    """
    from repro.engine.experiment import RecordsMissing

    fedmm_only = [_rec(s, algorithm="FedMM", final=0.7, clients="1+1") for s in range(2)]
    with pytest.raises(RecordsMissing, match="no DA method has all three algorithms"):
        C.claim_fig5(fedmm_only)
    with pytest.raises(RecordsMissing, match="two FedMM local-step settings"):
        C.claim_fig4_m25([_rec(s) for s in range(3)])


HEADER = ("DA,algorithm,M,p,seed,rounds,final acc (full test),best acc (subset),R_conv,"
          "acc of last client's local model\n")


def test_verdicts_from_tables(tmp_path):
    (tmp_path / "fedmm_fig2.csv").write_text(HEADER + "".join(
        f"CDAN,FedAvgGDA,20,{p},{s},150,{a},{a},100,0\n"
        for p, accs in ((0.5, (55, 56, 54)), (1.0, (44, 45, 43))) for s, a in enumerate(accs)))
    rows4 = [f"CDAN,FedMM,20,1.0,{s},150,60,60,100,0\n" for s in range(3)]
    rows4 += [f"CDAN,FedSGDA,1,1.0,{s},3000,40,{b},2000,0\n" for s, b in enumerate((45, 46, 47))]
    (tmp_path / "fedmm_fig4.csv").write_text(HEADER + "".join(rows4))
    rows5 = [f"CDAN,{a},20,1.0,{s},150,{v},{v},100,0\n" for s in range(3)
             for a, v in (("FedMM", 60), ("FedAvgGDA", 45), ("FedProxGDA", 44))]
    (tmp_path / "fedmm_fig5.csv").write_text(HEADER + "".join(rows5))
    out = {r["claim"]: r for r in T.verdicts_from_tables(tmp_path)}
    assert out["Fig. 2 degradation p=0.5 -> p=1"]["verdict"] == "pass"
    sg = out["Fig. 4 FedSGDA needs > 1000 rounds"]  # no curves file: the bound from finals
    assert sg["verdict"] == "pass" and "never reaches X in 3000 rounds (censored)" in sg["measured"]
    assert "margin >= 12.8 pp" in sg["measured"]  # 58.8 - 46
    for claim in ("Fig. 4 FedMM saves > 90% of the rounds", "Fig. 4 M = 25 faster than M = 20"):
        assert out[claim]["verdict"] == "not_run" and "curves" in out[claim]["measured"]
    assert out["Fig. 5 gap > 20 pp"]["verdict"] == "fail"
    with pytest.raises(FileNotFoundError, match="render it"):
        T.verdicts_from_tables(tmp_path / "missing")


def test_check_claims_maps_none_to_inconclusive():
    from repro.engine.compare.compare import check_claims
    from repro.engine.experiment import Claim, Experiment

    exp = Experiment(name="fedmm.fake", title="t", paper="p", cells=lambda s: [],
                     run_cell=lambda c, ctx: None,
                     claims=(Claim("a", "s", lambda recs: (None, "within noise")),
                             Claim("b", "s", lambda recs: (True, "x")),
                             Claim("c", "s", lambda recs: (False, "y"))))
    rows = check_claims({"fedmm.fake": exp}, {"fedmm.fake": ("reduced", [_rec(0)])})
    assert [r["verdict"] for r in rows] == ["inconclusive", "pass", "fail"]


def test_without_records_compare_judges_the_figure_claims_on_the_committed_tables(tmp_path):
    """repro.engine.records.from_outputs: no fedmm run record here, so the claims of Figs. 2, 4 and
    5
    are judged on the per-seed tables, and every row says so; the curve claims stay not_run.
    """
    from repro.engine.compare.compare import check_claims
    from repro.engine.registry import load_all

    test_verdicts_from_tables(tmp_path)  # writes the three synthetic tables into tmp_path
    exps = {n: e for n, e in load_all().items() if n in ("fedmm.fig2", "fedmm.fig4",
                                                          "fedmm.fig5")}
    rows = check_claims(exps, {n: ("reduced", []) for n in exps}, figures_dir=tmp_path)
    by = {(r["experiment"], r["claim"][:30]): r for r in rows}
    assert len(rows) == 6
    # kept: numbers of an earlier run, made (per figures/README.md) on a GPU
    assert all(r["made_by"].startswith(f"kept: {tmp_path.name}/fedmm_fig") for r in rows)
    assert all("GPU-made per figures/README.md (committed output" in r["made_by"] for r in rows)
    assert all(r["measured"].startswith(f"from {tmp_path.name}/fedmm_fig") for r in rows)
    deg = by[("fedmm.fig2", "FedAvgGDA degrades as the data")]
    assert deg["verdict"] == "pass" and "= 11.0 pp" in deg["measured"]   # 55 - 44
    sg = by[("fedmm.fig4", "FedSGDA needs more than 1000 r")]
    assert sg["verdict"] == "pass" and "margin >= 12.8 pp" in sg["measured"]
    for claim in ("FedMM saves > 90% of the round", "FedMM with M = 25 converges fa"):
        r = by[("fedmm.fig4", claim)]
        assert r["verdict"] == "not_run" and "needs the accuracy curves" in r["measured"]
    assert by[("fedmm.fig5", "FedMM has > 20 pp higher targe")]["verdict"] == "fail"
    # no committed table either: not_run, as before
    none = check_claims(exps, {n: ("reduced", []) for n in exps}, figures_dir=tmp_path / "x")
    assert {r["verdict"] for r in none} == {"not_run"}


def test_a_run_frozen_on_one_class_is_named():
    """Of the first 18 extended runs, 3 ended with the same accuracy at every
    evaluation (one class's share: NaN parameters); the claims name them, the means keep them.
    """
    rounds = [10.0 * k for k in range(1, 16)]
    live = [0.5 + 0.01 * k for k in range(15)]
    frozen = live[:10] + [0.1015] * 5
    assert B.frozen_from(rounds, frozen) == 110.0
    assert B.frozen_from(rounds, live[:11] + [0.1015] * 4) is None      # 4 evaluations: too few
    assert B.frozen_from(rounds, live[:10] + [0.55] * 5) is None        # not one class's share
    assert B.frozen_from(rounds, live) is None
    recs = [_rec(0, final=0.1015, curve=frozen, rounds=rounds),
            _rec(1, final=0.6, curve=live, rounds=rounds)]
    note = B.frozen_note(recs)
    assert note.startswith("; 1 of 2 runs froze ")
    assert note.endswith("DANN FedMM M=20 seed 0 from round 110 at 10.15%")
    assert B.frozen_note(recs[1:]) == ""
    # a record of code that checks finiteness cannot hold NaN parameters: not named frozen
    recs[0].metrics["finite_checked"] = 1.0
    assert B.frozen_note(recs) == ""
