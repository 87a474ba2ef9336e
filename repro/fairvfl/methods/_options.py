"""What the Fair VFL methods share: the options their ``configure`` takes (a module without
``METHOD``, skipped by :func:`repro.core.methods.discover`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from repro.fairvfl.fair_vfl import FairVFLConfig

# the fields of FairVFLConfig a caller may set; ``fair`` is the method's own
OPTIONS = tuple(f.name for f in dataclasses.fields(FairVFLConfig) if f.name != "fair")


def fair_vfl_config(method: str, fair: bool, options: dict[str, Any]) -> FairVFLConfig:
    """``FairVFLConfig(fair=fair, **options)``; an option outside :data:`OPTIONS` raises
    ``ValueError`` naming it and the method.
    """
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"{method} takes the options {list(OPTIONS)}, got {unknown}")
    return FairVFLConfig(fair=fair, **options)
