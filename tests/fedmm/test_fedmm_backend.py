"""The local-step backend is chosen by device (loop on CPU, graphed on CUDA), can be
overridden, and is part of a cell's config so records of different backends never mix.
"""

import pytest
import torch

from repro.fedmm.experiments._cells import allocate
from repro.fedmm.experiments.fig4 import fig4_cells
from repro.fedmm.experiments.fig5 import fig5_cells
from repro.fedmm.training import BACKEND_ENV, DEVICE_ENV, RunSpec, choose_backend


def test_backend_by_device_and_override(monkeypatch):
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    assert choose_backend("cpu") == "loop"
    assert choose_backend(torch.device("cuda")) == "graphed"
    assert choose_backend("cpu", override="vectorized") == "vectorized"
    monkeypatch.setenv(BACKEND_ENV, "vectorized")
    assert choose_backend("cpu") == "vectorized"
    monkeypatch.setenv(BACKEND_ENV, "vmap")
    with pytest.raises(ValueError, match=BACKEND_ENV):
        choose_backend("cpu")
    with pytest.raises(ValueError, match="backend"):
        RunSpec("FedMM", 1, 1, 1, backend="gpu")


def test_backend_is_part_of_the_cell_identity(monkeypatch):
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    cpu = fig4_cells("smoke")
    assert {c["backend"] for c in cpu} == {"loop"}
    monkeypatch.setenv(DEVICE_ENV, "cuda")  # only the config is built; nothing runs on CUDA
    gpu = fig4_cells("smoke")
    assert {c["backend"] for c in gpu} == {"graphed"}
    assert all(a != b and {**a, "backend": "x"} == {**b, "backend": "x"}
               for a, b in zip(cpu, gpu, strict=True))


def test_fig5_client_settings_cells_and_allocation():
    cells = fig5_cells("reduced")
    by = {}
    for c in cells:
        by.setdefault(c.get("clients", "1+1"), []).append(c)
    assert {k: len(v) for k, v in by.items()} == {"1+1": 27, "2+2": 27, "5+5": 27}
    assert all(c["rounds"] == 150 and c["local_steps"] == 20 for c in cells)
    clients = allocate({"clients": "5+5", "p": 1.0}, 100, 80)
    assert len(clients) == 10
    assert [len(c.source) for c in clients[:5]] == [20] * 5
    assert [len(c.target) for c in clients[5:]] == [16] * 5
    assert len(allocate({"p": 1.0}, 100, 80)) == 2
    with pytest.raises(ValueError, match="'2\\+2'"):
        allocate({"clients": "two", "p": 1.0}, 100, 80)
