"""Validation: the seed chapter's worked cases recomputed by accelsim's models
(``accelsim validate``). It sits above ``api`` so that a case can call any model.

Imports: everything below sweep (api, devices, analysis, report, engine, hw, config, workload).
"""
