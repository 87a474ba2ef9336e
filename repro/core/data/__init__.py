"""Raw data: the manifest and fetch layer, and one loader per data set.

Every loader returns plain numpy arrays plus metadata (a :class:`Dataset`, or paths for the
image collections), with no paper-specific preprocessing. ``LOADERS`` maps a short name to each
loader, for ``repro data list``.
"""

from __future__ import annotations

from collections.abc import Callable

from .adult import load_adult
from .base import Dataset
from .bsds500 import bsds500_meta, list_bsds500, load_bsds500_image
from .cifar10 import load_cifar10
from .compas import load_compas
from .crime import load_crime
from .libsvm import load_a8a, load_libsvm, parse_libsvm
from .mnist import load_mnist
from .office31 import load_office31, load_office31_images
from .penguins import load_penguins
from .store import DataError, DataFileCorrupt, DataFileMissing, fetch
from .uci_binary import load_breast_cancer_wisconsin, load_monks

LOADERS: dict[str, Callable] = {
    "adult": load_adult,
    "compas": load_compas,
    "crime": load_crime,
    "mnist": load_mnist,
    "penguins": load_penguins,
    "breast_cancer_wisconsin": load_breast_cancer_wisconsin,
    "monks": load_monks,
    "a8a": load_a8a,
    "libsvm": load_libsvm,
    "bsds500": list_bsds500,
    "cifar10": load_cifar10,
    "office31": load_office31,
}

__all__ = [
    "LOADERS",
    "DataError",
    "DataFileCorrupt",
    "DataFileMissing",
    "Dataset",
    "bsds500_meta",
    "fetch",
    "list_bsds500",
    "load_a8a",
    "load_adult",
    "load_breast_cancer_wisconsin",
    "load_bsds500_image",
    "load_cifar10",
    "load_compas",
    "load_crime",
    "load_libsvm",
    "load_mnist",
    "load_monks",
    "load_office31",
    "load_office31_images",
    "load_penguins",
    "parse_libsvm",
]
