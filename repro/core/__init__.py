"""The math and data the papers share: projections, metrics, partitions, validation, ground
truth, data loaders, paths, lazy exports and the :class:`~repro.core.algorithm.Algorithm`
protocol. It imports nothing of ``repro`` outside itself (docs/design.md, rule 1).
"""
