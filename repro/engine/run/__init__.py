"""Running cells: planning what to run, the runner and its executors, locks, progress, and the code
identity that keys records.
"""
