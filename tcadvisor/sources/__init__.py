"""Readers of stencils from where users already write them (see :mod:`tcadvisor.sources.result`)."""
