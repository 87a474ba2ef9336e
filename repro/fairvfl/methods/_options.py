"""What the Fair VFL methods share: their config and the options it takes (a module without
``METHOD``, skipped by :func:`repro.core.methods.discover`).
"""

from __future__ import annotations

from typing import Any

from repro.core.methods import fields_of
from repro.fairvfl.fair_vfl import FairVFLConfig

# the fields of FairVFLConfig a caller may set; ``fair`` is the method's own
OPTIONS = fields_of(FairVFLConfig, exclude=("fair",))


def fair_vfl_config(fair: bool, options: dict[str, Any]) -> FairVFLConfig:
    """``FairVFLConfig(fair=fair, **options)``."""
    return FairVFLConfig(fair=fair, **options)
