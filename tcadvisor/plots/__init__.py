"""Figures: sweet-spot maps, rooflines and the paper's figures (Plotly)."""
