"""The command implementations the CLI dispatches to (list, run, figures, compare, verify, against,
data, outputs), their errors and console plumbing.
"""
