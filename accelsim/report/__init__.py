"""TABLES FIRST: results -> DataFrames -> CSV/JSON/Parquet, Perfetto traces and plots.

Imports: accelsim (version), units, errors, safe_text, limits, files, precision, config,
engine (trace records), hw, mapping, workload.
"""
