"""The experiment engine: experiments as data, the registry (discovery), the runner and its
records, the comparison with the reported numbers, reports and plots.

Paper code never imports this package except from its ``experiments/``; see docs/design.md."""
