"""The theory checks of paper 004 (FedMM), one module per statement
(docs/decisions.md#fedmm-theory-checks).
"""
