"""What an experiment is: data describing a grid of cells, how to run one, how to render them.

A paper module builds :class:`Experiment` values and registers them
(:func:`repro.engine.registry.register`); the runner does the rest. Seeds come from the cell's
identity, never from its position in the grid or from global random state.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from repro.core.validation import check_finite
from repro.engine.readings import AS_WRITTEN, Reading, check_readings, select_readings
from repro.engine.records.records import RunRecord, canonical_json
from repro.engine.report.seedstats import SeedValues, check_over
from repro.engine.run.progress import LOGGER

# ``extended``: a larger budget than ``reduced`` that needs hardware beyond the default machine
# (fedmm's figures on a GPU); ``auto`` picks it only where its records exist (runner.auto_scale).
SCALES = ("smoke", "reduced", "extended", "paper")


def cell_seed(experiment: str, config: Mapping[str, Any]) -> int:
    """64-bit entropy of a cell: sha256 of its canonical identity (never Python's ``hash``)."""
    ident = canonical_json({"experiment": experiment, "config": dict(config)})
    return int.from_bytes(hashlib.sha256(ident.encode()).digest()[:8], "little")


def _stream_key(*key: str | int) -> tuple[int, ...]:
    digest = hashlib.sha256(canonical_json(list(key)).encode()).digest()
    return tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))


class RunContext:
    """Handed to ``run_cell``: the cell's randomness and its per-round log.

    ``rng("init")`` and ``rng("batches", client)`` are independent streams that depend only on
    the cell seed and the key, so adding a new stream never changes an existing one.
    """

    def __init__(self, experiment: str, config: Mapping[str, Any], seed: int, *,
                 code: str = "", results: Path | None = None) -> None:
        self.experiment = experiment
        self.config = dict(config)
        self.seed = seed
        # the run's code identity and results folder, for cell-side state such as a resumable
        # checkpoint (which must never be resumed by other code); not part of the randomness
        self.code = code
        self.results = results
        self.seed_sequence = np.random.SeedSequence(seed)
        self.curves: dict[str, list[float]] = defaultdict(list)

    def seed_sequence_for(self, *key: str | int, shared_over: tuple[str, ...] = ()
                          ) -> np.random.SeedSequence:
        """The named stream's SeedSequence. ``shared_over`` names config fields the stream must
        not depend on: cells that differ only in those fields (e.g. ``("method",)``: every
        method of a comparison) draw the same numbers, the same data split or initial point.
        """
        return np.random.SeedSequence(self.shared_seed(shared_over), spawn_key=_stream_key(*key))

    def shared_seed(self, shared_over: tuple[str, ...] = ()) -> int:
        """The cell seed, or with ``shared_over`` the seed of the cell's identity without those
        config fields (an unknown field is an error: a typo would silently share nothing).
        """
        if not shared_over:
            return self.seed
        unknown = sorted(set(shared_over) - set(self.config))
        if unknown:
            raise KeyError(f"{self.experiment}: shared_over names {unknown}, not fields of the "
                           f"cell's config {sorted(self.config)}")
        rest = {k: v for k, v in self.config.items() if k not in shared_over}
        return cell_seed(self.experiment, rest)

    def rng(self, *key: str | int, shared_over: tuple[str, ...] = ()) -> np.random.Generator:
        """A numpy Generator for the named stream (``shared_over``: see
        :meth:`seed_sequence_for`).
        """
        return np.random.default_rng(self.seed_sequence_for(*key, shared_over=shared_over))

    @property
    def artifacts(self) -> Path:
        """A folder for this experiment's cell-side files (checkpoints): under the run's results
        folder, so ``--results DIR`` moves them too. Created on first use.
        """
        from repro.core.paths import results_dir

        folder = results_dir(self.results) / "checkpoints" / self.experiment
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def torch_generator(self, *key: str | int, shared_over: tuple[str, ...] = ()):
        """A ``torch.Generator`` (CPU) seeded from the named stream."""
        import torch

        g = torch.Generator()
        seq = self.seed_sequence_for(*key, shared_over=shared_over)
        g.manual_seed(int(seq.generate_state(1, np.uint64)[0] >> 1))
        return g

    def log_round(self, round_: int, **values: float) -> None:
        """Append scalar values to the cell's curves; stop on NaN/inf naming the round."""
        check_finite(round_, **values)
        for name, v in values.items():
            self.curves[name].append(float(v))
        LOGGER.debug("%s round %d %s", self.experiment, round_,
                     " ".join(f"{k}={float(v):.6g}" for k, v in values.items()))


@dataclass(frozen=True)
class CellResult:
    """What ``run_cell`` returns; curves logged through the context are added by the runner."""

    metrics: Mapping[str, float]
    curves: Mapping[str, list[float]] = field(default_factory=dict)
    # wall-clock seconds the cell measured of its own parts (e.g. each method's solve): stored
    # in the record's ``timings``, the one field allowed to differ between two runs of a cell,
    # never among the metrics (which must be bitwise equal for equal seeds)
    timings: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Reproduced(SeedValues):
    """One reproduced number, addressed like a row of a reported CSV.

    ``key`` holds the CSV's identifying columns (e.g. ``{"dataset": "adult", "method": "FedBCD"}``);
    ``values`` one value of the reported statistic per independent run, and ``over`` says over
    what (``"seeds"``, ``"trials"``, ``"runs"``): a list pooled over clients or rounds is refused
    (:func:`repro.engine.report.seedstats.check_over`), because its std is not the noise of the
    statistic. ``converged``: one boolean per value where a run can end uncertified (e.g. an
    ADMM stop whose test was not met); only converged runs enter the mean and the band, and the
    row says ``k of N``. ``n_planned``: the runs the protocol asks for (lost runs are said too).
    ``n_paper``: how many independent runs the printed number averages (None: unknown, then no
    noise band can be formed); ``paper_std_over``: what the printed std is taken over when it is
    not over those runs (e.g. ``"trials x clients"``): it then bounds a ``match`` as printed but
    enters neither the noise band nor the spread comparison (:mod:`repro.engine.compare.verdict`).

    ``printed_units``: how many units of its last printed digit a printed value is known to
    (0.5 for one rounding; 1 where the paper rounded twice, e.g.
    docs/decisions.md#constrfl-reported).
    ``corrected``: for a documented misprint, the text the paper meant to print; the row keeps
    the printed value, is judged against the corrected one, and its reason says so (``note``
    must link the evidence).
    ``substitute_data``: the ``docs/deviations.md#anchor`` of an entry showing the paper's data
    cannot be obtained; the row is judged ``substitute_data`` (counted apart, our number shown)
    and the comparison refuses a link to no existing entry.
    ``rel_tolerance``: a tolerance relative to the reported value (``0.2`` = 20 % of it), which
    the comparison computes from the reported CSV, so an experiment never reads that file
    itself; ``tolerance`` (absolute) wins when both are given.
    """

    table: str
    key: Mapping[str, str]
    metric: str
    values: tuple[float, ...]
    tolerance: float | None = None
    note: str = ""
    printed_units: float = 0.5
    corrected: str | None = None
    substitute_data: str = ""
    rel_tolerance: float | None = None
    over: str = "seeds"
    converged: tuple[bool, ...] | None = None
    n_planned: int | None = None
    n_paper: int | None = None
    paper_std_over: str = ""

    def __post_init__(self) -> None:
        where = f"{self.table} {dict(self.key)} {self.metric}"
        check_over(self.over, where)
        if self.converged is not None and len(self.converged) != len(self.values):
            raise ValueError(f"{where}: {len(self.converged)} converged flags for "
                             f"{len(self.values)} values; give one per run")
        if self.n_planned is not None and self.n_planned < len(self.values):
            raise ValueError(f"{where}: n_planned {self.n_planned} < {len(self.values)} values")


class NeedsAccelerator(RuntimeError):
    """Raised by ``run_cell`` when the cell's protocol needs hardware this machine lacks (a
    CUDA GPU): the cell is recorded ``not_run`` with this message (what it needs, how to run
    it), never ``failed``, and a later run on such a machine computes it.
    """


class RecordsMissing(LookupError):
    """Raised by a claim's ``check`` when the records it needs are absent (a method or a dataset
    not run yet, an alternative reading run only in part): the claim is ``not_run`` with this
    message, never a ``fail``.
    """


@dataclass(frozen=True)
class Claim:
    """A qualitative statement of a paper, checked on the records.

    ``check(records)`` returns ``(passed, measured)`` where ``measured`` is a short text with
    the numbers it is based on; ``passed`` is ``None`` when the claim's margin lies within the
    seed noise of what it compares (verdict ``inconclusive``). A check that lacks the records it
    needs raises :class:`RecordsMissing` (verdict ``not_run``).
    """

    text: str
    source: str
    check: Callable[[list[RunRecord]], tuple[bool | None, str]]
    deviation: str = ""  # docs/deviations.md#anchor linked when it fails or is inconclusive


def ordering_verdict(diffs, what: str = "margin") -> tuple[bool | None, str]:
    """The verdict of an ordering claim from its paired differences over seeds (one per seed,
    positive in the claim's direction): ``True`` only when the mean margin
    exceeds twice the sample std of the paired difference, ``False`` when it is below minus
    twice that std, else ``None`` (``inconclusive``); with fewer than two seeds the noise is
    unknown and the verdict is ``None``.
    """
    d = np.asarray(list(diffs), dtype=float)
    if d.size == 0:
        return False, f"{what}: no paired seeds"
    mean = float(d.mean())
    if d.size < 2:
        return None, f"{what} {mean:.3g} on 1 seed (noise unknown: inconclusive)"
    std = float(d.std(ddof=1))
    text = (f"{what} {mean:.3g}, 2 x seed std of the paired difference {2 * std:.3g} "
            f"({d.size} seeds)")
    if mean > 2 * std:
        return True, text
    if mean < -2 * std:
        return False, text
    return None, text + " (inconclusive)"


@dataclass(frozen=True)
class Experiment:
    """A paper's table or figure as data.

    Parameters
    ----------
    name : ``"<paper>.<item>"``, e.g. ``"constrfl.table1"``.
    title : one line shown by ``repro list`` and on the rendered output.
    paper : the paper file(s) it reproduces, e.g. ``"003_733a787503856876.txt"``.
    cells : ``scale -> list of configs`` (JSON-able dicts; a config is a cell's identity).
    run_cell : ``(config, ctx) -> CellResult``.
    render : ``(records, out_dir, scale) -> list of written paths``.
    scales : the scales it declares (``smoke`` and ``paper``, optionally ``reduced``).
    cost : estimated wall time per scale on 2 cores, e.g. ``{"smoke": "5 s"}``.
    data : ``(dataset, file)`` pairs it reads; their sha256s are part of the record key.
    reported : stems of the ``repro/reported`` CSVs it reproduces.
    reproduce : ``records -> list[Reproduced]`` feeding ``repro compare``.
    claims : qualitative claims checked by ``repro compare``.
    readings : the readings of the paper this item is run under (:mod:`repro.engine.readings`);
        none declared means the one implicit primary reading ``as-written``, which changes
        nothing.
    """

    name: str
    title: str
    paper: str
    cells: Callable[[str], list[dict]]
    run_cell: Callable[[dict, RunContext], CellResult]
    render: Callable[[list[RunRecord], Path, str], list[Path]] | None = None
    scales: tuple[str, ...] = ("smoke", "paper")
    cost: Mapping[str, str] = field(default_factory=dict)
    data: tuple[tuple[str, str], ...] = ()
    reported: tuple[str, ...] = ()
    reproduce: Callable[[list[RunRecord]], list[Reproduced]] | None = None
    claims: tuple[Claim, ...] = ()
    readings: tuple[Reading, ...] = ()
    # Experiments naming the same group declare that a cell's result depends on its config
    # (and code and data) only, never on the experiment's name or the cell seed derived from
    # it; a cell that several of them plan is then computed once per sweep and its record
    # saved for each (runner.run_experiments; fedmm's figures share runs).
    shared_cells: str = ""
    # A check of data no manifest covers (e.g. Office-31, never downloaded): ``() -> str``, the
    # first line of why the cells cannot run plus the docs/deviations.md link ("" when they can).
    # A comparison without records states it instead of "no records".
    unavailable: Callable[[], str] | None = None
    # The library methods (``repro.<paper>.methods``, by printed name) this experiment's cells
    # run: the table names its methods itself, so a method added to the library is in no table
    # until one lists it here. ``repro list`` shows, per method, the tables using it.
    methods: tuple[str, ...] = ()
    # ``config -> str``: the model of the accelerator a cell runs on on this machine (e.g. the
    # CUDA device's name), ``""`` for the CPU or for a device this machine lacks; it enters the
    # record's key (records.record_key), so records of two accelerator models never mix. None:
    # every cell runs on the CPU.
    accelerator: Callable[[dict], str] | None = None
    # ``(filename, loader, made)``: without run records here, the claims are judged on the
    # committed output ``<figures>/<filename>`` read back by ``loader(path)`` (``made``: how it
    # was made; repro.engine.records.from_outputs). None: claims without records are not_run.
    from_outputs: tuple[str, Callable[[Path], list[RunRecord]], str] | None = None
    # ``why(resolved scale) -> str``: under ``--scale auto``, the reason this machine leaves the
    # cells to another one, ``""`` where they run here (repro.engine.run.planning.auto_elsewhere).
    elsewhere: Callable[[str], str] | None = None

    def __post_init__(self) -> None:
        check_readings(self.name, self.readings)
        if "." not in self.name:
            raise ValueError(f"experiment name must be '<paper>.<item>', got {self.name!r}")
        unknown = set(self.scales) - set(SCALES)
        if unknown or "smoke" not in self.scales:
            raise ValueError(f"{self.name}: scales must include 'smoke' and be among {SCALES}, "
                             f"got {self.scales}")

    def resolve_scale(self, scale: str) -> str:
        """``auto`` is ``reduced`` if declared, else ``paper``; any other scale must be
        declared (``reduced`` where none is declared is an error, never a silent ``paper``).
        ``auto`` never gives ``extended`` here: :func:`repro.engine.run.runner.auto_scale` picks it
        where its records exist.
        """
        if scale == "auto":
            return "reduced" if "reduced" in self.scales else "paper"
        if scale not in self.scales:
            hint = (" (use --scale auto for 'reduced' where declared, else 'paper')"
                    if scale == "reduced" else "")
            raise ValueError(f"{self.name} has no scale {scale!r}; it declares "
                             f"{', '.join(self.scales)}{hint}")
        return scale

    def configs(self, scale: str) -> list[dict]:
        configs = self.cells(self.resolve_scale(scale))
        seen: set[str] = set()
        for c in configs:
            ident = canonical_json(c)
            if ident in seen:
                raise ValueError(f"{self.name}: duplicate cell config {ident}")
            seen.add(ident)
        return configs

    @property
    def primary_reading(self) -> Reading:
        return select_readings(self.name, self.readings, "primary")[0]

    def select_readings(self, which: str | None = "all") -> tuple[Reading, ...]:
        """The readings named by ``--reading`` (``all``, ``primary`` or an id), primary first."""
        return select_readings(self.name, self.readings, which)

    def reading_configs(self, scale: str, reading: Reading = AS_WRITTEN
                        ) -> list[tuple[dict, dict]]:
        """``(base, config)`` per cell under ``reading``: the seed comes from ``base``, the
        record key from ``config`` (module :mod:`repro.engine.readings`).
        """
        return [(c, reading.apply(c)) for c in self.configs(scale)]


def read_as(records: list[RunRecord], reading: Reading) -> list[RunRecord]:
    """The records as ``reading`` reads them: for a metric reading, each reported metric is
    replaced by the recorded metric standing for it (a record lacking one is an error naming
    the metric and the remedy); other readings return the records unchanged.
    """
    if not reading.metrics:
        return records
    import dataclasses

    out = []
    for r in records:
        if not r.ok:
            out.append(r)
            continue
        missing = [m for m in reading.metrics.values() if m not in r.metrics]
        if missing:
            raise KeyError(f"{r.experiment} record {r.key}: reading {reading.id!r} reads "
                           f"metric(s) {missing} that the record lacks; rerun "
                           f"`repro run {r.experiment}` with the current code")
        metrics = {**r.metrics, **{k: r.metrics[v] for k, v in reading.metrics.items()}}
        out.append(dataclasses.replace(r, metrics=metrics))
    return out
