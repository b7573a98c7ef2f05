"""WHAT THE MACHINE IS: frozen, validated parameters per component, loaded from YAML.

Imports: units, errors, limits, files, precision. Never workload/, hw/ or anything above.
"""
