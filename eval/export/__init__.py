"""`python -m eval.export harbor|atif ...`: our benchmarks and records in Harbor's formats (docs/harbor.md)."""
