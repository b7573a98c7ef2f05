"""Validation: the seed chapter's worked cases recomputed by accelsim's models
(``accelsim validate``). It sits above ``api`` so that a case can call any model.

Imports: errors, limits, precision, analysis, api, config, devices, hw, report, workload.
"""
