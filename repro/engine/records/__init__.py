"""Records: the run records, the one records query, the cell ledger, kept outputs and records read
from committed outputs.
"""
