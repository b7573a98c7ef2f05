"""HOW WORK IS CUT AND PLACED: dataflow and loop order per layer -> fold streams.

Imports: errors, limits, precision, config, hw, workload.
"""
