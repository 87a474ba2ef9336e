"""Client allocation with label/domain imbalance p and the per-client minibatch streams
(docs/decisions.md#fedmm-clients).

Two clients: client 1 holds the first floor(p n_S) source and the first floor((1-p) n_T)
target examples, client 2 the rest (authors' ``source_ratio``/``target_ratio`` slices). p = 1
gives one source-only and one target-only client; p = 0.5 an even (IID in domain) split. A
client's minibatch of B rows holds n_src = floor(B n_S,i / (n_S,i + n_T,i)) source rows and
B - n_src target rows. Each (client, domain) stream shuffles its indices, yields consecutive
batches, and reshuffles and restarts when the next batch would run past the end (the tail is
dropped), as in the authors' ``dataset_factory.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from repro.core.validation import check_range


@dataclass(frozen=True)
class ClientData:
    """Indices into the global source and target training sets held by one client."""

    source: np.ndarray
    target: np.ndarray

    def batch_split(self, batch: int) -> tuple[int, int]:
        """(n_src, n_tgt) rows of a batch of ``batch`` rows."""
        ns, nt = len(self.source), len(self.target)
        n_src = (batch * ns) // (ns + nt)
        return n_src, batch - n_src


def allocate_two_clients(n_source: int, n_target: int, p: float) -> tuple[ClientData, ClientData]:
    """docs/decisions.md#fedmm-clients: client 1 gets the first floor(p n_S) source and floor((1-p)
    n_T) target rows.
    """
    check_range("p", p, low=0, high=1)
    ks, kt = int(np.floor(p * n_source)), int(np.floor((1 - p) * n_target))
    src, tgt = np.arange(n_source), np.arange(n_target)
    return ClientData(src[:ks], tgt[:kt]), ClientData(src[ks:], tgt[kt:])


def allocate_split_clients(n_source: int, n_target: int, n_src_clients: int,
                           n_tgt_clients: int) -> list[ClientData]:
    """[R] (N_s + N_t) setting of Fig. 5: each domain split evenly into single-domain clients."""
    check_range("n_src_clients", n_src_clients, low=1)
    check_range("n_tgt_clients", n_tgt_clients, low=1)
    empty = np.arange(0)
    return ([ClientData(s, empty) for s in np.array_split(np.arange(n_source), n_src_clients)]
            + [ClientData(empty, t) for t in np.array_split(np.arange(n_target), n_tgt_clients)])


def code_evaluated_client(clients) -> int:
    """Index of the client whose local model the authors' code evaluates
    (docs/decisions.md#fedmm-metrics).

    The code evaluates the session weights after a round: the LAST client's local model
    before the dual shift. Its runs use ``source_ratio=0, target_ratio=1``, so its client 1 is
    target-only and its last client (client 2) holds the source data. Our allocation is the
    mirror image (client 1 gets the fraction p of the source data), so the authors' evaluated
    client is our client 0: at p = 1 the source-only client. For the split settings of Fig. 5
    it is the first source-only client, also index 0. Raises when client 0 holds no source
    data (the code's evaluated client always trains on source labels).
    """
    clients = list(clients)
    if not clients or len(clients[0].source) == 0:
        raise ValueError("the authors' evaluated client holds source data; client 0 has none "
                         "(allocate with allocate_two_clients(p > 0) or "
                         "allocate_split_clients)")
    return 0


class BatchStream:
    """Consecutive batches of a shuffled index set; reshuffle when the next batch would reach
    past the end.
    """

    def __init__(self, indices: np.ndarray, batch: int, rng: np.random.Generator) -> None:
        if batch > 0 and len(indices) < batch:
            raise ValueError(f"batch must be <= the client's {len(indices)} rows, got {batch}")
        self.indices, self.batch, self.rng = np.asarray(indices), batch, rng
        self.order = rng.permutation(self.indices)
        self.pos = 0

    def next(self) -> np.ndarray:
        if self.batch == 0:
            return self.indices[:0]
        if self.pos + self.batch > len(self.order):
            self.order = self.rng.permutation(self.indices)
            self.pos = 0
        out = self.order[self.pos:self.pos + self.batch]
        self.pos += self.batch
        return out
