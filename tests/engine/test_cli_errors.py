"""How ``repro`` says that a command ended in an exception.

An expected error (a message fedrepro raises on purpose about bad input) is its message alone,
exit status 2; anything else is said with its type and the ``file:line`` where it arose, exit
status 1, and ``-v`` prints the full traceback first (:mod:`repro.engine.commands.errors`).
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

import repro
import repro.engine.commands.listing as listing
from repro import cli
from repro.cli import main
from repro.engine.commands.errors import error_lines, is_expected, place
from repro.engine.compare import compare

ROOT = Path(repro.__file__).resolve().parents[1]
HERE = Path(__file__).resolve().relative_to(ROOT).as_posix()


def _line_of(func, text: str) -> int:
    """The file line number of the first source line of ``func`` that contains ``text``."""
    lines, first = inspect.getsourcelines(func)
    return first + next(i for i, ln in enumerate(lines) if text in ln)


def _cli_call() -> int:
    """The line of ``repro list``'s call of the listing (patched by the tests below)."""
    return _line_of(cli.cmd_list, "return list_experiments(")


def _lookup_fails(results=None):
    methods = {"FedAvg": 1}
    return methods["FedAvgM"]  # an implicit KeyError, as reproduce.py:34 raised it


def _library_fails(results=None):
    return json.loads("{")  # a ValueError raised inside the json library


def _noted_fails(results=None):
    exc = ZeroDivisionError("division by zero")
    exc.add_note("in cell test.x {'i': 3}")
    raise exc


def test_an_implicit_key_error_says_its_type_and_file_line(monkeypatch, capsys):
    monkeypatch.setattr(listing, "list_experiments", _lookup_fails)
    assert main(["list"]) == 1
    err = capsys.readouterr().err.splitlines()
    line = _line_of(_lookup_fails, 'methods["FedAvgM"]')
    # where it arose, then the innermost frame of repro/ that led there (this test's function
    # stands in for a paper's code, outside repro/)
    assert err[0] == (f"repro list: error: KeyError: 'FedAvgM' (at {HERE}:{line}, called "
                      f"from repro/cli.py:{_cli_call()})")
    assert err[1] == "  (an unexpected error: `repro -v list ...` prints its traceback)"
    assert len(err) == 2 and not any("Traceback" in e for e in err)


def test_with_v_the_full_traceback_comes_first(monkeypatch, capsys):
    monkeypatch.setattr(listing, "list_experiments", _lookup_fails)
    assert main(["-v", "list"]) == 1
    err = capsys.readouterr().err
    line = _line_of(_lookup_fails, 'methods["FedAvgM"]')
    assert err.startswith("Traceback (most recent call last):\n")
    # the traceback names the CLI's frame, the raising frame and its source line
    assert 'repro/cli.py", line' in err and f'{HERE}", line {line}, in _lookup_fails' in err
    assert 'return methods["FedAvgM"]' in err
    last = err.rstrip("\n").splitlines()
    assert last[-2] == "KeyError: 'FedAvgM'"  # the traceback's own last line
    assert last[-1].startswith(f"repro list: error: KeyError: 'FedAvgM' (at {HERE}:{line}, ")
    assert "prints its traceback" not in err


def test_an_error_in_repro_code_is_placed_relative_to_the_checkout(monkeypatch, capsys):
    monkeypatch.setattr(listing, "list_experiments",
                        lambda results=None: compare.default_experiment_name(None))
    assert main(["list"]) == 1
    err = capsys.readouterr().err.splitlines()
    line = _line_of(compare.default_experiment_name, "stem.partition")
    assert err[0] == ("repro list: error: AttributeError: 'NoneType' object has no attribute "
                      f"'partition' (at repro/engine/compare/compare.py:{line})")


def test_a_library_error_names_the_library_line_and_ours(monkeypatch, capsys):
    monkeypatch.setattr(listing, "list_experiments", _library_fails)
    assert main(["list"]) == 1
    err = capsys.readouterr().err.splitlines()
    ours = _line_of(_library_fails, "json.loads")
    assert err[0].startswith("repro list: error: JSONDecodeError: Expecting property name ")
    assert "json/decoder.py:" in err[0]
    # the innermost frame of repro/ that led there: the CLI's call of the (patched) listing
    assert f"{HERE}:{ours}" not in err[0]  # this test's function is not repro's
    assert err[0].endswith(f", called from repro/cli.py:{_cli_call()})")
    assert _library_fails.__code__.co_filename.endswith(HERE)


def test_notes_of_an_unexpected_error_follow_it(monkeypatch, capsys):
    monkeypatch.setattr(listing, "list_experiments", _noted_fails)
    assert main(["list"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("repro list: error: ZeroDivisionError: division by zero (at "
                             f"{HERE}:")
    assert err[1] == "  in cell test.x {'i': 3}"


def test_expected_errors_keep_their_clean_message(capsys):
    assert main(["run", "nope.table9"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("repro run: error: no experiment matches 'nope.table9'; known: ")
    assert "KeyError" not in err[0] and "(at " not in err[0] and "Traceback" not in err[0]
    assert main(["run", "constrfl.tabel1"]) == 2  # the re-raised KeyError with suggestions
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("did you mean: constrfl.table1, ")
    assert main(["data", "verify", "nosuch"]) == 2  # a ValueError the command raises
    err = capsys.readouterr().err
    assert err.startswith("repro data: error: unknown dataset 'nosuch'; the manifest's ")


def test_expected_means_a_raise_statement_of_repro_of_the_four_types():
    def caught(fn):
        try:
            fn()
        except Exception as exc:  # noqa: BLE001
            return exc
        raise AssertionError("no exception")

    from repro.engine.registry import select

    deliberate = caught(lambda: select("nope.*"))  # `raise KeyError(...)` in registry.py
    assert is_expected(deliberate)
    assert not is_expected(caught(lambda: {}["k"]))  # implicit, and not in repro/
    assert not is_expected(caught(lambda: compare.default_experiment_name(None)))  # type
    assert not is_expected(caught(lambda: json.loads("{")))  # raised by a library
    assert error_lines("x", deliberate) == [f"repro x: error: {deliberate.args[0]}"]
    assert place(str(ROOT / "repro" / "cli.py"), 7) == "repro/cli.py:7"
    assert place("/elsewhere/mod.py", 3) == "/elsewhere/mod.py:3"


FIXTURES = ROOT / "tests" / "fixtures"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_cell_error_is_placed_where_the_cell_raised_it_also_in_a_worker(isolated, jobs):
    """``test.flaky``'s cell 1 raises a ValueError in the plugin (outside ``repro/``: not one
    of fedrepro's messages); with ``--jobs 2`` joblib raises it again in the parent from its
    own code, and the place is still the plugin's line, said to be a worker's. (A fresh
    process: loky's reused workers of other tests know other plugins.)
    """
    import os
    import subprocess
    import sys

    env = {**os.environ, "FEDREPRO_PLUGINS": "sweep_plugin",
           "PYTHONPATH": os.pathsep.join([str(FIXTURES), *sys.path])}
    source = (FIXTURES / "sweep_plugin.py").read_text().splitlines()
    line = 1 + next(i for i, s in enumerate(source) if 'raise ValueError("singular' in s)
    done = subprocess.run([sys.executable, "-m", "repro.cli", "run", "test.flaky", "--scale",
                           "smoke", "--no-progress", "--jobs", jobs], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    err = done.stderr.splitlines()
    head = [e for e in err if e.startswith("repro run: error: ")]
    assert head == ["repro run: error: ValueError: singular system in cell 1"]
    where = err[err.index(head[0]) + 1]  # the message's second line, then the place
    worker = " in a worker" if jobs == "2" else ""
    assert where.startswith(f"second line (at tests/fixtures/sweep_plugin.py:{line}{worker}, "
                            "called from repro/engine/run/runner.py:")
    assert "  in cell test.flaky {'i': 1}" in err


def test_a_plugin_that_cannot_be_imported_is_named_with_its_remedy(monkeypatch, capsys):
    monkeypatch.setenv("FEDREPRO_PLUGINS", "no_such_fedrepro_plugin")
    assert main(["list"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["repro list: error: $FEDREPRO_PLUGINS names 'no_such_fedrepro_plugin', which "
                   "is not importable (No module named 'no_such_fedrepro_plugin'); put its folder "
                   "on PYTHONPATH or remove it from $FEDREPRO_PLUGINS"]
