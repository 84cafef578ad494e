"""Bundled GPU kernels run through CuPy (imported lazily: the analytical part never needs a GPU)."""
