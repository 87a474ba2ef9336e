"""The experiment engine: experiments as data, the registry (discovery), the runner and its
records (with one records query, :mod:`repro.engine.records.query`), the comparison with the
reported
numbers (found by :mod:`repro.engine.compare.reported`), reports and plots.

Paper code never imports this package except from its ``experiments/``; see docs/design.md.
"""
