"""SWEEPS: design-space specs, local and Dask executors, resumable result stores.

Imports: accelsim (version), units, errors, limits, safe_yaml, files, precision, api, config,
devices, engine, report, workload.
"""
