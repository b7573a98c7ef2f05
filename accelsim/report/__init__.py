"""TABLES FIRST: results -> DataFrames -> CSV/JSON/Parquet, Perfetto traces and plots.

Imports: engine (trace records), config, workload, units, errors.
"""
