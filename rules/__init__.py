"""The rule catalog: one module per rule, named after its code.

TL0xx degradation types (seed 002), TL1xx integrity, TL2xx correctness
hazards, TL3xx performance and portability. Copy the nearest module to add
a rule; the registry finds it.
"""
