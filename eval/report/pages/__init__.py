"""The report's pages: the index, job pages and side-by-sides (written with their records:
`completed.py`), their HTML and the viewer's parts."""
