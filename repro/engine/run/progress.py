"""Progress output: a bar over cells in the parent, per-round log lines inside a run."""

from __future__ import annotations

import logging
import os
import sys

from tqdm.auto import tqdm

LOGGER = logging.getLogger("repro")


def configure_logging(verbosity: int = 0) -> None:
    """``0``: warnings only; ``1``: cell-level info; ``2``: every logged round."""
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)
    os.environ["FEDREPRO_LOG_LEVEL"] = str(level)  # inherited by worker processes
    _setup(level)


class BarSafeHandler(logging.Handler):
    """Log lines written through ``tqdm.write`` to the current ``sys.stderr``: a line printed
    while a progress bar is shown clears the bar, is printed whole on its own line and the bar
    is redrawn below it (a plain StreamHandler glued the line onto the bar).
    """

    def emit(self, record: logging.LogRecord) -> None:
        try:
            tqdm.write(self.format(record), file=sys.stderr)
        except Exception:  # noqa: BLE001 - logging must not raise
            self.handleError(record)


def _setup(level: int) -> None:
    if not LOGGER.handlers:
        handler = BarSafeHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s", "%H:%M:%S"))
        LOGGER.addHandler(handler)
    LOGGER.setLevel(level)


def worker_logging() -> None:
    """Apply the parent's log level inside a worker process."""
    level = os.environ.get("FEDREPRO_LOG_LEVEL")
    if level is not None:
        _setup(int(level))


def cell_bar(total: int, desc: str, enabled: bool = True) -> tqdm:
    """The progress bar over an experiment's cells."""
    return tqdm(total=total, desc=desc, unit="cell", disable=not enabled or total == 0,
                dynamic_ncols=True, file=sys.stderr)
