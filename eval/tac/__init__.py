"""Running TheAgentCompany's own `evaluator.py` files offline (see eval/judges/agentcompany/judge.py)."""
