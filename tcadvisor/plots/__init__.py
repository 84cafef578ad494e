"""Figures: sweet-spot maps, rooflines and the paper's figures (Plotly).

* :mod:`~tcadvisor.plots.maps`          — ``map_data`` (a DataFrame from ``advisor.sweep``) and ``map_figure``
* :mod:`~tcadvisor.plots.roofline`      — ``roofline_figure(advice)``, ``roofline_of(stencil, dtype, gpu)``
  and the roof/point helpers
* :mod:`~tcadvisor.plots.paper_figures` — Figs. 7–10, 13–14 and Table 3 (``FIGURES``, ``all_figures``,
  ``write_figures``)
* :mod:`~tcadvisor.plots.output`        — atomic writes: offline HTML, PNG/SVG where an exporter exists, CSV
* :mod:`~tcadvisor.plots.commands`      — the ``map``, ``roofline`` and ``figures`` subcommands

Nothing is imported here: the CLI imports :mod:`~tcadvisor.plots.commands` for
every command, and ``tcadvisor advise`` must not pay for plotly or pandas.
"""
