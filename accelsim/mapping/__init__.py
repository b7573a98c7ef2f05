"""HOW WORK IS CUT AND PLACED: dataflow and loop order per layer -> fold streams.

Imports: hw, config, workload, units, errors.
"""
