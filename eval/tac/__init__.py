"""Running TheAgentCompany's own `evaluator.py` files offline (see eval/judges/agentcompany/judge.py).

One benchmark, two names: `agentcompany` is the benchmark's name in configs and the registry
(`benchmark=agentcompany`, `judge=agentcompany`, eval/benchmarks/agentcompany.py); `eval/tac/` is
the runtime its tasks need: the task image rebuilt without Docker, the company's file server, the
sandbox and compat modules the evaluator runs in. The benchmark (the agent's side: the image's
`/data`, the served file server) and the judge (the evaluator's side) both stand on it; it imports
neither."""
