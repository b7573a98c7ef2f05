"""ANALYSIS: the laws on top of the models: hierarchical roofline, Amdahl, mapping-space counting.

Imports: engine, mapping, hw, config, workload, units, errors.
"""
