"""What Algorithms 1 and 3 say while they run (``run(verbose=True)``) and how a run ended.

:func:`with_progress` wraps a ``callback(round, state, messages)`` so that each outer iteration
also prints one line on stderr: the iteration, the ADMM rounds of Algorithm 2's call and whether
(23) certified it (Algorithm 1), the largest multiplier change, ``||w||_inf``. :func:`ending`
is the sentence a state's ``message`` gives: stopped by its test, or the cap it exhausted.
"""

from __future__ import annotations

import sys

import numpy as np

__all__ = ["ending", "with_progress"]


def _line(name: str, k: int, state) -> str:
    parts = [f"{name}: outer iteration {k}"]
    if getattr(state, "admm_rounds", None):
        cert = "certified by (23)" if state.admm_certified[-1] else "hit its cap t_max"
        parts.append(f"ADMM {state.admm_rounds[-1]} rounds ({cert})")
    if getattr(state, "dual_changes", None):
        parts.append(f"max multiplier change {state.dual_changes[-1]:.3g}")
    if getattr(state, "residuals", None):
        parts.append(f"subproblem residual {state.residuals[-1]:.3g}")
    parts.append(f"||w||_inf {float(np.max(np.abs(state.w))):.4g}")
    return ", ".join(parts)


def with_progress(callback, verbose: bool, name: str):
    """``callback`` (or None), printing a line per outer iteration first when ``verbose``."""
    if not verbose:
        return callback

    def report(k, state, messages):
        print(_line(name, k, state), file=sys.stderr, flush=True)
        if callback is not None:
            callback(k, state, messages)

    return report


def ending(k: int, stopped: bool, k_max: int | None, test: str, cap_name: str,
           uncertified: bool = False) -> str:
    """How a run of ``k`` outer iterations ended, in a sentence."""
    if stopped and uncertified:
        return (f"stopped by {test} after {k} outer iterations, but on an ADMM call that hit "
                "its cap t_max: a small step, not a certificate")
    if stopped:
        return f"stopped by {test} after {k} outer iterations"
    if k_max is not None and k >= k_max:
        return (f"reached the cap {cap_name} = {k_max} outer iterations without meeting {test}: "
                f"not converged (raise {cap_name}, or check the problem)")
    return f"running: {k} outer iterations so far, {test} not met yet"
