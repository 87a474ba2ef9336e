"""The glossary at the foot of ``REPORT.md``: every term the page uses, in a line each."""

from __future__ import annotations

__all__ = ["GLOSSARY", "glossary_lines"]

GLOSSARY = (
    ("answer", "the verdict of a table or figure under its primary reading: reproduced, "
     "partly (k of N), not reproduced, not run or undecided."),
    ("reading", "one interpretation of the paper's text where it supports more than one (a "
     "setting, a metric's definition); each is run and compared."),
    ("primary", "the reading chosen from the text before any run; the answers are its. Other "
     "readings are shown as secondary information and never replace the answer."),
    ("cell", "one run of an experiment: one configuration and seed, saved as one record."),
    ("scale", "how big the runs are: smoke (seconds, same code path), paper (the paper's "
     "settings), reduced (a documented CPU-feasible protocol), extended (fedmm's figures on a "
     "GPU)."),
    ("match", "our number equals the printed one within its printed std or precision."),
    ("within noise", "our number differs from the printed one by less than the noise of a "
     "difference of two means over seeds, under a noise model declared from the text."),
    ("deviates", "outside both; each deviating row names its cause in comparison.md."),
    ("cause", "why a row deviates, one of: paper inconsistency (the paper's own numbers "
     "contradict it), setting identified (a fitted reading reproduces it while the row was held "
     "out of the fit), setting guessed (another reading of an unstated setting reaches or "
     "brackets the printed number), authors' code differs (a reading of the authors' code "
     "does), unexplained (none does; what was tried is listed). Each comes with the row's value "
     "under that reading beside the primary's."),
    ("noise model", "what varies from one of the paper's runs to the next and how many runs a "
     "printed number averages, from the text; declared per table."),
    ("fitted reading", "an unstated setting chosen from a declared search space on declared "
     "calibration rows, judged only on the other (held-out) rows."),
    ("substitute data", "the paper's data set cannot be obtained, so the row runs on a stand-in "
     "and is not compared."),
    ("not run", "no result: the data cannot be obtained, the cell needs an accelerator, or it "
     "failed (the reason is given)."),
    ("undecided", "rows whose committed columns cannot be judged by the current rule, or "
     "claims inside the noise of the seeds (inconclusive); a rerun decides them."),
    ("claim", "a qualitative statement of the paper (an ordering, a trend) that a figure is "
     "judged by; it holds (pass), fails, or is inconclusive."),
    ("earlier run, not remade here", "a row copied from the committed comparison "
     "because this run did not recompute its experiment; it names the commit it comes from."),
    ("made by", "the commit of the code whose records gave the row."),
    ("stale", "records made by other code than this checkout's, shown because no current ones "
     "exist."),
    ("finding", "a theory check whose theorem's conditions do not hold where the paper uses it: "
     "reported, not failed."),
    ("compute time", "the summed wall time of the records shown (records made on an "
     "accelerator counted apart)."),
    ("[C] / [J]", "the conference and journal versions of the fair vertical FL paper."),
    ("AC / FR / HM", "accuracy, fairness rate FR = 1 - DEO, and their harmonic mean."),
    ("DEO", "difference of equal opportunity: the gap between the two groups' true positive "
     "rates (on a loss, as the paper defines it)."),
    ("DFP / DFN", "the gaps between the groups' false positive and false negative rates."),
    ("LM / MLP", "the linear (logistic) model and the multilayer perceptron of the fair VFL "
     "papers."),
    ("NP", "Neyman-Pearson classification: minimise the class-0 loss subject to the class-1 "
     "loss at most r."),
    ("LCQP", "linearly constrained quadratic program, the synthetic problem of constrfl's "
     "Table 4."),
    ("R_AB", "relative unfairness: mean of the 20% largest client losses over the mean of the "
     "20% smallest."),
)


def glossary_lines() -> list[str]:
    """The ``## Glossary`` section."""
    return ["## Glossary", "", *(f"- **{term}**: {text}" for term, text in GLOSSARY), ""]
