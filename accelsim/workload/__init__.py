"""WHAT TO COMPUTE, hardware-agnostic: operators, models and workload readers.

Imports: units, errors, limits, safe_yaml, files, precision. Never config/ or anything above.
"""
