"""One test over every discovered experiment and theory check no paper is named.

Every experiment the registry discovers is run once at smoke scale, in-process, into a temp
folder shared by the module: lazily, when the first test of that experiment asks for its
records, so ``pytest tests/test_discovered.py -k relfair.table1`` runs that experiment alone
(``make test`` keeps these tests on one xdist worker with ``--dist loadgroup`` so no run is
repeated). Then, per experiment:

- it runs: no cell fails (a cell whose data is absent is ``not_run`` and says so);
- it renders: ``render`` writes files that exist;
- every :class:`~repro.engine.experiment.Reproduced` it returns addresses a row of a reported
  CSV it names in ``reported`` (table stem, key columns and metric);
- every claim evaluates to a verdict;
- every ``docs/<file>.md#anchor`` it links (claims' deviation entries, the comparison's and the
  claims' reasons, readings) is a heading of that file.

Theory checks: each discovered module imports, and each registered check belongs to the folder
it lives in (``theory/<paper>/`` registers ``<paper>.*``; ``theory/core/`` the shared
``projections.*``). Running each check at size small is left to the per-paper theory tests,
which already do it (``tests/theory/``): running them here again would double their CI time.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from repro.engine import registry
from repro.engine.compare.compare import check_claims, compare, heading_anchor, load_reported
from repro.engine.run.runner import plan_readings, run_cell, run_experiments

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"docs/([\w./-]+\.md)#([\w-]+)")
EXPERIMENTS = sorted(registry.load_all())

pytestmark = [pytest.mark.xdist_group("discovered_smoke"), pytest.mark.slow]


class _SmokeRecords:
    """``name -> records`` of the smoke run of experiment ``name``, run on first access."""

    def __init__(self, out) -> None:
        self.out = out
        self._records: dict[str, list] = {}

    def __getitem__(self, name: str) -> list:
        if name not in self._records:
            with pytest.MonkeyPatch.context() as mp:
                mp.setenv("FEDREPRO_OFFLINE", "1")
                mp.setenv("FEDREPRO_CACHE", str(self.out / "cache"))
                summaries = run_experiments([registry.get(name)], "smoke", jobs=1,
                                            out=self.out / "results", progress=False,
                                            keep_going=True)
            self._records.update({s.experiment: s.records for s in summaries})
        return self._records[name]

    def ran(self) -> list[str]:
        return sorted(self._records)


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """``(folder, records)``: ``records[name]`` runs experiment ``name`` at smoke scale the
    first time it is asked for (:class:`_SmokeRecords`).
    """
    out = tmp_path_factory.mktemp("discovered")
    return out, _SmokeRecords(out)


def _anchors(doc: str) -> set[str]:
    path = ROOT / "docs" / doc
    if not path.is_file():
        return set()
    text = path.read_text()
    return ({heading_anchor(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}
            | set(re.findall(r'<a id="([^"]+)"></a>', text)))


def _links(text: str) -> list[tuple[str, str]]:
    return LINK.findall(text)


def _strings(value) -> list[str]:
    """Every string inside a (nested) dataclass / mapping / sequence value."""
    if isinstance(value, str):
        return [value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [s for f in dataclasses.fields(value) for s in _strings(getattr(value, f.name))]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def test_discovery_finds_experiments():
    assert len(EXPERIMENTS) > 1 and all("." in name for name in EXPERIMENTS)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_runs_at_smoke(smoke, name):
    _, records = smoke
    recs = records[name]
    assert recs, f"{name}: no cells at smoke scale"
    failed = [r.reason for r in recs if r.status == "failed"]
    assert not failed, f"{name}: {failed[:3]}"
    for r in recs:
        assert r.ok or r.reason.startswith("data unavailable"), (name, r.status, r.reason)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_a_rerun_of_a_cell_is_bitwise_equal_but_its_timings(smoke, name, tmp_path):
    """Determinism: the cheapest cell of the smoke run, computed again in a fresh folder, gives
    the same record in every field but ``timings`` (wall seconds a cell measures of its own
    parts go there, through ``CellResult.timings``, never into the metrics).
    """
    _, records = smoke
    ok = [r for r in records[name] if r.ok]
    if not ok:  # data absent: nothing to recompute (test_runs_at_smoke checks the reason)
        assert all(r.status == "not_run" for r in records[name]), name
        return
    first = min(ok, key=lambda r: r.timings["wall_s"])
    exp = registry.get(name)
    cell = next(c for c in plan_readings(exp, "smoke") if c.key == first.key)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FEDREPRO_OFFLINE", "1")
        again, how = run_cell(exp, cell, tmp_path / "results")
    assert how == "computed"
    assert again.without_timings() == first.without_timings(), name


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_renders(smoke, name):
    out, records = smoke
    exp = registry.get(name)
    assert exp.render is not None, f"{name} has no renderer"
    # an experiment whose data is absent (Office-31) still renders: its tables say `not run`
    written = exp.render(records[name], out / "figures", "smoke")
    assert written and all(Path(p).is_file() for p in written), (name, written)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_reproduced_keys_are_rows_of_its_reported_csvs(smoke, name):
    _, records = smoke
    exp, ok = registry.get(name), [r for r in records[name] if r.ok]
    if exp.reproduce is None:
        assert not exp.reported, f"{name} names reported CSVs but has no reproduce()"
        return
    if not ok:  # data absent (Office-31): every cell says so, and nothing is reproduced
        assert all(r.status == "not_run" and r.reason.startswith("data unavailable")
                   for r in records[name]), name
        assert not [p for p in exp.reproduce(ok) if p.values], name
        return
    rows = {(r.stem, tuple(sorted(r.key)), r.metric) for r in load_reported()
            if r.stem in exp.reported}
    assert {r[0] for r in rows} == set(exp.reported), f"{name}: a reported CSV is missing"
    produced = exp.reproduce(ok)
    assert produced, f"{name}: reproduce() returned nothing"
    strays = [(p.table, dict(p.key), p.metric) for p in produced
              if (p.table, tuple(sorted(p.key.items())), p.metric) not in rows]
    assert not strays, f"{name}: Reproduced rows with no reported row: {strays[:5]}"


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_claim_evaluates_to_a_verdict(smoke, name):
    _, records = smoke
    exp = registry.get(name)
    rows = check_claims({name: exp}, {name: ("smoke", records[name])})
    assert len(rows) == len(exp.claims)
    has_records = any(r.ok for r in records[name])
    for row in rows:
        allowed = {"pass", "fail", "inconclusive"} | ({"not_run"} if not has_records else set())
        assert row["verdict"] in allowed, (name, row)
        assert isinstance(row["measured"], str) and row["measured"], (name, row)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_linked_docs_anchor_exists(smoke, name):
    _, records = smoke
    exp = registry.get(name)
    texts = [c.deviation for c in exp.claims]
    texts += _strings(list(exp.readings))
    ok = [r for r in records[name] if r.ok]
    if exp.reproduce is not None and ok:
        texts += [s for p in exp.reproduce(ok) for s in (p.note, p.substitute_data)]
    reported = [r for r in load_reported() if r.stem in exp.reported]
    texts += [row["reason"] for row in compare({name: exp}, {name: ("smoke", records[name])},
                                               reported)]
    texts += [row["reason"] for row in check_claims({name: exp},
                                                    {name: ("smoke", records[name])})]
    broken = sorted({f"docs/{doc}#{anchor}" for t in texts for doc, anchor in _links(t)
                     if anchor not in _anchors(doc)})
    assert not broken, f"{name} links missing anchors: {broken}"


# ---------------------------------------------------------------- theory checks


def test_every_theory_module_imports_and_registers_under_its_folder():
    from theory import registry as theory_registry

    modules = theory_registry.load_check_modules()
    assert modules
    errors = {m: tb.splitlines()[-1] for m, tb in theory_registry._IMPORT_ERRORS.items()
              if m.startswith("theory.")}  # not the planted THEORY_EXTRA_MODULES of other tests
    assert not errors, errors
    misplaced = []
    for name, entry in theory_registry.registered().items():
        parts = entry.module.split(".")
        if parts[0] != "theory" or len(parts) < 3:
            continue  # THEORY_EXTRA_MODULES of other tests
        folder = parts[1]
        prefix = "projections" if folder == "core" else folder
        if name.split(".")[0] != prefix:
            misplaced.append(f"{name} (in {entry.module})")
    assert not misplaced, f"checks named after another folder: {misplaced}"


def test_a_selected_experiment_runs_alone(tmp_path):
    """Asking for one experiment's records runs that experiment and no other (so ``-k NAME``
    costs that experiment's smoke run, not every experiment's).
    """
    name = "core.demo" if "core.demo" in EXPERIMENTS else EXPERIMENTS[0]
    runs = _SmokeRecords(tmp_path)
    assert runs.ran() == []
    assert runs[name] and runs.ran() == [name]
    assert sorted(p.name for p in (tmp_path / "results").iterdir()
                  if p.is_dir() and "." in p.name) == [name]
