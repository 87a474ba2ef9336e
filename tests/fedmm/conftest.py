"""Shared pieces of the fedmm tests."""

import pytest


class RoundLog:
    """The part of a RunContext that :func:`repro.fedmm.training.train` uses: ``log_round``
    appends each logged value to ``curves[name]``.
    """

    def __init__(self):
        self.curves = {}

    def log_round(self, r, **kw):
        for k, v in kw.items():
            self.curves.setdefault(k, []).append(float(v))


@pytest.fixture
def round_log():
    """A factory of fresh :class:`RoundLog` objects."""
    return RoundLog
