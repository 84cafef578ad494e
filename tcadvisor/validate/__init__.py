"""The validation suite: measure this GPU's ceilings, run suites of bundled-kernel cases, and set
every measurement against the model's prediction.

* :mod:`.calibrate` — ``tcadvisor calibrate``: microbenchmarks (``kernels/calibrate.cu``) for the
  DRAM copy bandwidth, the CUDA-core FMA rates and the rate of every MMA instruction shape, written
  as a spec YAML the advisor reads like any bundled one;
* :mod:`.suites` — suite files (``validation/suites/*.yaml``, format in ``docs/validation.md``);
* :mod:`.runner` — ``tcadvisor validate``: each case and unit through the bundled-kernel runner,
  optionally profiled by Nsight Compute (:mod:`.ncu`);
* :mod:`.compare` — relative errors, bottlenecks and the outcome of each unit comparison;
* :mod:`.report` — CSV, JSON and one self-contained HTML report; :mod:`.summary` — the table of docs/results.md;
* :mod:`.advise_run` — ``tcadvisor advise --run``.

Nothing here imports CuPy at import time: the host-side logic (statistics, parsing, comparison,
reports) runs and is tested on a CPU, on recorded measurements.
"""
