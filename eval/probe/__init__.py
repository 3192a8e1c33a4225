"""The recovery probe of Figure 4 (right); see `eval.probe.run` and `python -m eval.probe --help`."""
