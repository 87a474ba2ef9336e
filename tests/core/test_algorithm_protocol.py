"""Every registered method through one generic driver.

The methods are those of every paper's ``repro.<paper>.methods`` package (found by
``repro.engine.registry.library_methods``, so a new method file is tested here with no edit);
each paper's package gives ``tiny_problem(seed)``, a problem small enough for two rounds.
:func:`protocol_violations` lists what a method breaks of :mod:`repro.core.algorithm`:

- the constructor is ``Alg(problem, config, *, init=None, rng=None, ...)`` (the first two
  positional, every other keyword-only with a default);
- ``configure(problem)`` gives a frozen dataclass named ``<Something>Config``, and the built
  algorithm's ``config`` is that object;
- ``step()`` takes no argument and returns a :class:`RoundMessages` numbered by round, whose
  payloads are typed messages (dataclass instances);
- ``run(2, callback=...)`` calls ``callback(round, state, messages)`` with rounds 1, 2 and
  returns ``state``; ``run(5, stop=lambda s: True)`` takes exactly one round;
- two algorithms built alike from one seed reach bitwise-equal states (compared as the
  ``repr`` of their messages).

A planted non-conforming method shows that each rule fires.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from typing import Any

import pytest

from repro.core.algorithm import Algorithm, RoundMessages, run_rounds
from repro.core.methods import Method, discover
from repro.engine.registry import library_methods

LIBRARY = library_methods()
CASES = [(paper, name) for paper, methods in LIBRARY.items() for name in methods]


def _payload_ok(msg: Any) -> bool:
    return dataclasses.is_dataclass(msg) and not isinstance(msg, type)


def protocol_violations(method: Method, tiny_problem) -> list[str]:
    """What ``method`` breaks of the protocol, one line each (empty: it conforms)."""
    out: list[str] = []
    params = list(inspect.signature(method.algorithm).parameters.values())
    if [p.name for p in params[:2]] != ["problem", "config"] or any(
            p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params[:2]):
        out.append(f"constructor starts {[p.name for p in params[:2]]}, not (problem, config)")
    rest = params[2:]
    bad = [p.name for p in rest if p.kind is not p.KEYWORD_ONLY or p.default is p.empty]
    if bad:
        out.append(f"constructor arguments not keyword-only with a default: {bad}")
    missing = {"init", "rng"} - {p.name for p in rest}
    if missing:
        out.append(f"constructor lacks {sorted(missing)}")
    config = method.configure(tiny_problem(0))
    if not (dataclasses.is_dataclass(config) and type(config).__dataclass_params__.frozen):
        out.append(f"config {type(config).__name__} is not a frozen dataclass")
    if not type(config).__name__.endswith("Config"):
        out.append(f"config class {type(config).__name__} is not named <Alg>Config")
    if out:
        return out
    alg = method.build(tiny_problem(0))
    if not isinstance(alg, Algorithm):
        return [f"{type(alg).__name__} lacks a member of the Algorithm protocol"]
    if alg.config is not config and alg.config != config:
        out.append("alg.config is not the config it was built with")
    seen: list[tuple[int, Any]] = []
    state = alg.run(2, callback=lambda r, s, m: seen.append((r, m)))
    if [r for r, _ in seen] != [1, 2]:
        out.append(f"run(2) called back with rounds {[r for r, _ in seen]}, not [1, 2]")
    if state is not alg.state:
        out.append("run() did not return alg.state")
    msgs = [m for _, m in seen] + [alg.step()]
    for i, m in enumerate(msgs, start=1):
        if not isinstance(m, RoundMessages):
            out.append(f"round {i} returned {type(m).__name__}, not RoundMessages")
            continue
        if m.round != i:
            out.append(f"round {i}'s messages are numbered {m.round}")
        if not all(_payload_ok(x) for x in m.downlink + m.uplink):
            out.append(f"round {i}: a payload is not a typed message (dataclass)")
    once = method.build(tiny_problem(0))
    count: list[int] = []
    once.run(5, stop=lambda s: True, callback=lambda r, s, m: count.append(r))
    if count != [1]:
        out.append(f"run(5, stop=always) took rounds {count}, not [1]")
    twin = method.build(tiny_problem(0))
    twin_msgs = [twin.step() for _ in range(3)]
    if repr(twin_msgs) != repr(msgs):
        out.append("two algorithms built alike from one seed exchanged different messages")
    return out


@pytest.mark.parametrize(("paper", "name"), CASES)
def test_every_registered_method_follows_the_protocol(paper, name):
    pkg = importlib.import_module(f"repro.{paper}.methods")
    assert protocol_violations(pkg.METHODS[name], pkg.tiny_problem) == []


def test_every_paper_registers_methods():
    # the four papers of the package (the demo has no federated method)
    assert {"constrfl", "relfair", "fairvfl", "fedmm"} <= set(LIBRARY)
    assert all(len(m) >= 2 for m in LIBRARY.values())


# -- the rules fire on a planted non-conforming method -----------------------------------------


@dataclasses.dataclass  # not frozen, not named ...Config
class _Hyper:
    lr: float = 0.1


class _Bad:
    def __init__(self, problem, hyper, theta0):  # a positional third argument, no init/rng
        self.config, self.state = hyper, 0

    def step(self):
        self.state += 1
        return []

    def run(self, rounds):
        return self.state


@dataclasses.dataclass(frozen=True)
class _CounterConfig:
    lr: float = 0.1


@dataclasses.dataclass(frozen=True)
class _Tick:
    value: int


class _Counter:
    """Conforms, except that its rounds are numbered from 0 and one payload is a bare int."""

    def __init__(self, problem, config, *, init=None, rng=None):
        self.config, self.state = config, 0

    def step(self):
        self.state += 1
        return RoundMessages(self.state - 1, (_Tick(self.state),), (self.state,))

    def run(self, rounds=None, *, stop=None, callback=None):
        return run_rounds(self, rounds, stop=stop, callback=callback)


def test_the_checks_fire_on_planted_methods():
    bad = protocol_violations(Method("Bad", _Bad, lambda p, **o: _Hyper(), "planted"),
                              lambda seed: None)
    assert any("keyword-only" in v for v in bad)
    assert any("lacks ['init', 'rng']" in v for v in bad)
    assert any("not a frozen dataclass" in v for v in bad)
    assert any("<Alg>Config" in v for v in bad)
    off = protocol_violations(Method("Off", _Counter, lambda p, **o: _CounterConfig(), "planted"),
                              lambda seed: None)
    assert any("numbered 0" in v for v in off)
    assert any("not a typed message" in v for v in off)


def test_run_rounds_counts_stops_and_calls_back():
    alg = _Counter(None, _CounterConfig())
    seen = []
    assert run_rounds(alg, 3, callback=lambda r, s, m: seen.append((r, s, m.round))) == 3
    assert seen == [(1, 1, 0), (2, 2, 1), (3, 3, 2)]
    assert run_rounds(alg, 0) == 3  # zero rounds: no step, the state as it was
    assert run_rounds(alg, 10, stop=lambda s: s >= 5) == 5
    with pytest.raises(ValueError, match="needs rounds= or stop="):
        run_rounds(alg)
    with pytest.raises(ValueError, match="rounds must be an int"):
        run_rounds(alg, -1)


def test_discover_refuses_two_methods_with_one_name(tmp_path, monkeypatch):
    pkg = tmp_path / "dupmethods"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    body = ("from repro.core.methods import Method\n"
            "METHOD = Method('Same', object, lambda p, **o: None, 'x')\n")
    (pkg / "a.py").write_text(body)
    (pkg / "b.py").write_text(body)
    (pkg / "_helper.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match="defined twice"):
        discover("dupmethods", [str(pkg)])
    (pkg / "b.py").write_text(body.replace("'Same'", "'Other'"))
    importlib.invalidate_caches()
    import sys
    sys.modules.pop("dupmethods.b", None)
    found = discover("dupmethods", [str(pkg)])
    assert list(found) == ["Same", "Other"] and found["Same"].module == "dupmethods.a"


def test_a_method_declares_its_options_and_accepts_those_of_its_package():
    """``fields_of``: a config's init fields (an InitVar alias is none), less ``exclude``, then
    ``extra``; a method accepts the union of its package's declared options and hands
    ``configure`` only its own.
    """
    import dataclasses

    from repro.core.methods import fields_of
    from repro.relfair import methods as relfair
    from repro.relfair.fedavg import FedAvgConfig
    from repro.relfair.scaff_pd_ia import ScaffPDIAConfig

    assert fields_of(FedAvgConfig) == ("local_steps", "local_work", "eta")   # no `lr` alias
    assert fields_of(ScaffPDIAConfig, exclude=("ambiguity",), extra=("alpha", "phi")) == (
        "local_steps", "local_work", "eta", "tau", "sigma", "varsigma", "alpha", "phi")
    with pytest.raises(ValueError, match=r"exclude names \['nope'\]"):
        fields_of(FedAvgConfig, exclude=("nope",))
    with pytest.raises(ValueError, match="needs a dataclass"):
        fields_of(dict)
    fedavg = relfair.METHODS["FedAvg"]
    union = set().union(*(m.options for m in relfair.METHODS.values()))
    assert fedavg.accepted() == union and {"tau", "alpha", "phi", "sigma"} <= union
    seen = []
    spy = dataclasses.replace(fedavg, configure=lambda p, **o: seen.append(o) or FedAvgConfig())
    spy.config_for(None, tau=1.0, eta=0.2, alpha=0.3)
    assert seen == [{"eta": 0.2}]
    with pytest.raises(ValueError, match="options must be a tuple of option names"):
        dataclasses.replace(fedavg, options="eta")
