"""SWEEPS: design-space specs, local and Dask executors, resumable result stores.

Imports: api and everything below.
"""
