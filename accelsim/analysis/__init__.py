"""ANALYSIS: the laws on top of the models: hierarchical roofline, Amdahl, mapping-space counting.

Imports: units, errors, limits, precision.
"""
