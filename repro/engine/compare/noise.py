"""The noise model of each reported table, declared from the paper's text.

A printed mean is one draw of the paper's protocol: what varies from one of its runs to the next
(a random split, an initial point, minibatches) and how many runs it averaged. A
:class:`NoiseModel` says both, with the words of the text that say so, and how our runs realise
the same variation. The comparison measures our spread under that model and judges a
difference of means against it (:mod:`repro.engine.compare.verdict`); where the paper also prints a
std, the rule tests whether that std can come from the stated protocol (an F-test of the two
variances, :func:`repro.engine.compare.verdict.std_consistency`) and, where it cannot, says so as a
paper inconsistency and uses our std on both sides of the band.

``n_paper`` is the run count the text states; where it states none the model says so
(``runs_stated=False``) and ``n_paper`` is 1, the one count the text allows for sure.

A paper package declares its models where its rows are made (its ``reproduce.py``, output-only
code), with :func:`declare`; ``comparison.md`` shows every model above its table's rows.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NoiseModel", "declare", "declared", "noise_model"]

PRINTED_STD = ("runs", "pooled", "none")


@dataclass(frozen=True)
class NoiseModel:
    """What varies across the paper's runs behind one reported table.

    ``stem``: the reported CSV (``fairvfl_conf_table1``); ``varies``: what changes from run to
    run, in words; ``n_paper``: the runs each printed number averages; ``runs_stated``: whether
    the text states that count (else ``n_paper`` is 1); ``basis``: where the text says so
    (paper file, section, quoted words); ``printed_std``: what a printed std is taken over
    (``runs``: the same runs as the mean; ``pooled``: runs and clients together, no noise of
    the mean; ``none``: the table prints no std); ``ours``: how our runs realise the model
    (what our seeds or trials vary).
    """

    stem: str
    varies: str
    n_paper: int
    runs_stated: bool
    basis: str
    printed_std: str
    ours: str

    def __post_init__(self) -> None:
        if self.n_paper < 1:
            raise ValueError(f"{self.stem}: n_paper must be >= 1, got {self.n_paper}")
        if not self.runs_stated and self.n_paper != 1:
            raise ValueError(f"{self.stem}: the text states no run count, so n_paper is 1 "
                             f"(got {self.n_paper}); set runs_stated=True with the words that "
                             "state it in basis")
        if self.printed_std not in PRINTED_STD:
            raise ValueError(f"{self.stem}: printed_std must be one of {PRINTED_STD}, got "
                             f"{self.printed_std!r}")

    def line(self) -> str:
        """One sentence for ``comparison.md``."""
        count = (f"{self.n_paper} run{'s' if self.n_paper > 1 else ''} per printed number"
                 if self.runs_stated else "the text states no run count: n_paper = 1")
        std = {"runs": "the printed std is over those runs",
               "pooled": "the printed std pools runs and clients (no noise of the mean)",
               "none": "no std printed"}[self.printed_std]
        return (f"varies: {self.varies}; {count}; {std} (text: {self.basis}); ours: "
                f"{self.ours}")


_MODELS: dict[str, NoiseModel] = {}


def declare(*models: NoiseModel) -> None:
    """Register the noise model of each model's table (a second, different one is an error)."""
    for m in models:
        if m.stem in _MODELS and _MODELS[m.stem] != m:
            raise ValueError(f"two noise models declared for {m.stem}")
        _MODELS[m.stem] = m


def noise_model(stem: str) -> NoiseModel | None:
    """The declared model of ``stem``, None where its paper package declares none."""
    return _MODELS.get(stem)


def declared() -> dict[str, NoiseModel]:
    """Every declared model, by stem."""
    return dict(sorted(_MODELS.items()))
