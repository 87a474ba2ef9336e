"""The derived data of paper 004: MNIST -> MNIST-M (docs/decisions.md#fedmm-mnist-data) and the
Office-31 features (docs/decisions.md#fedmm-office-model,
docs/decisions.md#fedmm-office-data).

MNIST splits as TensorFlow's ``read_data_sets`` (authors' code): train = official train images
5,000..59,999 (55,000), validation = the first 5,000, test = the official 10,000. Digits are
binarised (pixel > 0 -> 255) and replicated to 3 channels (uint8, (n, 28, 28, 3)).

MNIST-M (Ganin et al. 2016; authors' ``create_mnistm.py``): for each MNIST image of a split, in
order, pick one of the 200 BSDS500 train JPEGs uniformly, a 28x28 patch with top-left row in
[0, H-28) and column in [0, W-28) uniformly, and output |patch - digit| (digit strokes show
the inverted background). Image k of MNIST-M has the label of MNIST image k. The code draws the
background with ``RandomState(42)`` and the patch with the unseeded global RNG; here every draw
comes from ``numpy.random.default_rng([seed, split id])`` (seed 42 by default), all draws of a
split made up front, so image k does not depend on how many images are generated. Full splits
are cached as ``.npy`` under ``<cache_dir()>/fedmm/``.

Office-31 (the six transfer tasks of Tables 1-2): each domain's images through a frozen
ImageNet MobileNetV2 (:mod:`repro.fedmm.mobilenetv2`), once, cached as ``.npy`` by file list;
:mod:`repro.fedmm.experiments.table1` trains bottleneck + label predictor + adversarial head on
them. [DEV] The backbone is frozen (features computed once, eval mode, centre crop, no
augmentation) and is MobileNetV2 width 1.0 (1280-d) instead of 1.4 (1792-d): only those weights
exist here. Office-31 itself is not in the mirror; :func:`repro.core.data.office31.load_office31`
raises ``DataFileMissing`` and the runner records the cell as ``not_run`` with that reason.
"""

from __future__ import annotations

import hashlib
from functools import cache

import numpy as np

from repro.core.data.bsds500 import list_bsds500, load_bsds500_image
from repro.core.data.mnist import load_mnist
from repro.core.data.office31 import load_office31, load_office31_images
from repro.core.data.store import cache_dir
from repro.fedmm.mobilenetv2 import FEATURE_DIM, centre_crop, extract_features, load_pretrained

SPLITS = {"train": 0, "test": 1, "validation": 2}
RECIPE_VERSION = 1
PATCH = 28
DOMAIN = {"A": "amazon", "D": "dslr", "W": "webcam"}
TASKS = ("A->W", "D->W", "W->D", "A->D", "D->A", "W->A")


@cache
def mnist_split(split: str) -> tuple[np.ndarray, np.ndarray]:
    """Binarised 3-channel MNIST of a TF split: ``(X uint8 (n, 28, 28, 3), y int64 (n,))``."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {list(SPLITS)}, got {split!r}")
    ds = load_mnist("test" if split == "test" else "train")
    X, y = ds.X, ds.y.astype(np.int64)
    if split == "train":
        X, y = X[5000:], y[5000:]
    elif split == "validation":
        X, y = X[:5000], y[:5000]
    X = np.where(X > 0, 255, 0).astype(np.uint8)
    return np.repeat(X[..., None], 3, axis=3), y


@cache
def background_pool() -> tuple[np.ndarray, ...]:
    """The 200 BSDS500 train images (RGB uint8), sorted by numeric id."""
    return tuple(load_bsds500_image(p) for p in list_bsds500("train"))


def blend(digits: np.ndarray, pool, bg: np.ndarray, u: np.ndarray) -> np.ndarray:
    """|patch - digit| for each digit; ``bg`` pool indices, ``u`` (n, 2) uniforms -> offsets."""
    out = np.empty(digits.shape, dtype=np.uint8)
    for k in range(len(digits)):
        img = pool[bg[k]]
        h, w = img.shape[:2]
        r, c = int(u[k, 0] * (h - PATCH)), int(u[k, 1] * (w - PATCH))
        patch = img[r:r + PATCH, c:c + PATCH].astype(np.int16)
        out[k] = np.abs(patch - digits[k].astype(np.int16)).astype(np.uint8)
    return out


def make_mnistm(digits: np.ndarray, pool, seed: int, split: str,
                n_split: int | None = None) -> np.ndarray:
    """MNIST-M images for the first ``len(digits)`` images of a split of ``n_split`` images."""
    n_split = len(digits) if n_split is None else n_split
    rng = np.random.default_rng([seed, SPLITS[split]])
    bg = rng.integers(0, len(pool), size=n_split)
    u = rng.random((n_split, 2))
    return blend(digits, pool, bg[:len(digits)], u[:len(digits)])


def mnistm_split(split: str, n: int | None = None, seed: int = 42) -> tuple[np.ndarray,
                                                                             np.ndarray]:
    """MNIST-M of a TF split (first ``n`` images if given): ``(X uint8 (n, 28, 28, 3), y)``.

    The full split is generated once and cached; a prefix is generated directly (identical to
    the prefix of the full split).
    """
    X, y = mnist_split(split)
    path = cache_dir() / "fedmm" / f"mnistm_v{RECIPE_VERSION}_{split}_seed{seed}.npy"
    if path.is_file():
        M = np.load(path, mmap_mode="r")
        k = len(M) if n is None else n
        return np.asarray(M[:k]), y[:k]
    if n is not None and n < len(X):
        return make_mnistm(X[:n], background_pool(), seed, split, len(X)), y[:n]
    M = make_mnistm(X, background_pool(), seed, split)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, M)
    tmp.replace(path)
    return M, y


# -- Office-31 --------------------------------------------------------------------------------
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
