"""PURE COSTS: f(component params, tile) -> cycles, bytes, actions. No state, no I/O.

Imports: config, workload, units, errors.
"""
