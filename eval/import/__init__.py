"""`python -m eval.import atif DIR...`: Harbor trial results back into our job records (docs/harbor.md).

`import` is a Python keyword, so this package cannot be named in an import statement; `python -m`
finds it by its dotted name (runpy), which is all it is for. Its code lives in eval/harbor/importer.py.
"""
