"""WHAT TO COMPUTE, hardware-agnostic: operators, models and workload readers.

Imports: units, errors, files. Never config/ or anything above.
"""
