"""Stand-in for `sotopia`, the client of the NPC stack (simulated colleagues, a Redis database) that
the benchmark's base image installs: importable, failing a checkpoint that uses it (absent.py)."""

from absent import stand_in_package

stand_in_package(__name__, "sotopia")
