"""What a query searches and resolves unless told otherwise: the depths and radii, and when two answers tie.

One home for the numbers the advisor, the maps, the command line and the Python API must agree on; only the
standard library, so that building the command-line parser (:mod:`tcadvisor.queryargs`) imports nothing heavy.
"""
from __future__ import annotations

#: Deepest fusion the best-depth search covers unless told otherwise.
DEFAULT_MAX_FUSE = 16
#: Fusion depths and radii a map or sweep covers unless told otherwise.
DEFAULT_FUSES = range(1, DEFAULT_MAX_FUSE + 1)
DEFAULT_RADII = range(1, 9)
#: Relative difference of throughput under which two configurations count as equal (the model is a bound, so
#: smaller differences mean nothing): the advisor's choice, its sentences, its reports and the maps share it.
TIE_TOLERANCE = 0.01
