"""Comparing with the papers: the reported numbers, verdicts and their rules, tolerances and noise
models, fitted readings, causes, claims and deviations.
"""
