"""Office-31 data of paper 004 (specs/fedmm.md §3.2, §4.2, §11 "reduced"): the six transfer
tasks and frozen MobileNetV2 features of each domain, on which
:mod:`repro.fedmm.experiments.table1` trains bottleneck + label predictor + adversarial head.

[DEV] The backbone is frozen (features computed once, eval mode, centre crop, no augmentation)
and is MobileNetV2 width 1.0 (1280-d) instead of 1.4 (1792-d): only those weights exist here.
Office-31 itself is not in the mirror; :func:`repro.core.data.office31.load_office31` raises
``DataFileMissing`` and the runner records the cell as ``not_run`` with that reason.
"""

from __future__ import annotations

import hashlib

import numpy as np

from repro.core.data.office31 import load_office31, load_office31_images
from repro.core.data.store import cache_dir
from repro.fedmm.mobilenetv2 import FEATURE_DIM, centre_crop, extract_features, load_pretrained

DOMAIN = {"A": "amazon", "D": "dslr", "W": "webcam"}
TASKS = ("A->W", "D->W", "W->D", "A->D", "D->A", "W->A")


def office_features(domain: str, image_size: int = 224) -> tuple[np.ndarray, np.ndarray]:
    """(features float32 (n, 1280), labels int64) of one domain, cached by file list."""
    ds = load_office31(domain)
    ident = hashlib.sha256("\n".join(f"{p}:{p.stat().st_size}" for p in ds.X).encode())
    path = (cache_dir() / "fedmm" /
            f"office31_{domain}_{image_size}_{ident.hexdigest()[:16]}.npy")
    if path.is_file():
        return np.load(path), ds.y
    resize = round(image_size * 256 / 224)
    model = load_pretrained()
    feats = []
    for k in range(0, len(ds.X), 64):
        imgs = load_office31_images(ds.X[k:k + 64], size=resize)
        feats.append(extract_features(model, centre_crop(imgs, image_size)))
    F = np.concatenate(feats) if feats else np.zeros((0, FEATURE_DIM), np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, F)
    return F, ds.y
