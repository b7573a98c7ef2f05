"""ANALYSIS: roofline, Amdahl and the seed's worked cases, computed through the models.

Imports: engine, mapping, hw, config, workload, units, errors.
"""
