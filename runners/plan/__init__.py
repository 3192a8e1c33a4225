"""The plan of a sweep before it starts: how many jobs, what they should cost, how long they take.

`runningtab plan [OVERRIDES…]` (`python -m runners.plan`) and `runningtab sweep … --cfg job` print it
for the grid the sweep would run (docs/sweeps.md#the-plan):

- `tasks.py`: the jobs per benchmark: its tasks (loaded; else its shipped selection; else
  `plan.tasks`; else said to be uncounted, and why) × its cells;
- `figures.py`: what one job of a cell takes, a range: the stated token figures of conf/tokens/
  × the model's prices (conf/pricing/), or a pilot sweep's own records (`plan.pilot`);
- `estimate.py`: the sums, per benchmark, per model and in all, and the wall time at the cluster's
  jobs in flight, the providers' concurrency and a stated model latency (`plan.latency_s`);
- `render.py`: the lines.
"""
