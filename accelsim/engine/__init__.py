"""THE ONE CLOCK: SimPy replay of tile streams over shared resources, and its exact fast path.

Imports: mapping, hw, config, workload, units, errors.
"""
