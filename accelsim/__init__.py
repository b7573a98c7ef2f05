"""accelsim: a cycle-approximate simulator of ML accelerators.

Layers (data flows one way): ``units | errors`` -> ``config | workload`` -> ``hw`` ->
``mapping`` -> ``engine`` -> ``report | analysis`` -> ``api`` -> ``sweep`` -> ``cli``.
"""

__version__ = "0.1.0"
