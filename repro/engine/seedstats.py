"""Mean and spread over seeds of a cell's values, written once for every cell type."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["SeedValues"]


class SeedValues:
    """Mixin for a dataclass with a ``values`` tuple (one number per seed or trial).

    ``mean`` is nan without values; ``std`` is the sample std (``ddof=1``) and nan for fewer
    than two values (a single seed has no measured spread).
    """

    values: tuple

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return float(np.mean(self.values)) if self.values else math.nan

    @property
    def std(self) -> float:
        return float(np.std(self.values, ddof=1)) if len(self.values) > 1 else math.nan
