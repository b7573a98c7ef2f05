"""PURE COSTS: f(component params, tile) -> cycles, bytes, actions. No state, no I/O.

Imports: units, errors, limits, precision, config, workload.
"""
