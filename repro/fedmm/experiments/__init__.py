"""The experiments of paper 004, one module per paper item (registered on import by
:mod:`repro.engine.registry`): :mod:`.fig2`, :mod:`.fig4`, :mod:`.fig5` (MNIST -> MNIST-M) and
:mod:`.table1` (Office-31, Tables 1 and 2). :mod:`._cells` holds the shared grid and the MNIST
run; :mod:`.claims`, :mod:`.render` and :mod:`.reproduce` are output only (outside the code
identity)."""
