"""The theory checks of paper 004 (FedMM), one module per statement (specs/fedmm.md §9.2)."""
