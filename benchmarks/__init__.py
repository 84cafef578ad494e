"""Benchmark, fitting and device-session scripts of tcadvisor (not shipped in the wheel): ``python -m benchmarks``
lists them.  A regular package, so that ``benchmarks.*`` is this folder even where an installed dependency
(Devito) brings a top-level ``benchmarks`` package of its own."""
