"""`python -m eval.score`: score job records now or again later (eval/judges/scoring.py)."""
