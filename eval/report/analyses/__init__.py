"""The analyses: one module per table or figure, and what they share (seed and paired statistics,
expected values and their fates, plots, the tab over time)."""
