"""`python -m eval.score`: score job records now or again later (eval/score/records.py)."""
