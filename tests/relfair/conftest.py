"""Fixtures shared by the relfair tests."""

import pytest
import torch


@pytest.fixture(autouse=True)
def one_thread():
    """As the runner does: on 2 shared cores, intra-op threads only add contention (and the
    bitwise-equality tests compare runs at one fixed thread count).
    """
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
