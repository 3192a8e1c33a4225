"""TheAgentCompany's own evaluator per task, and the LLM server its evaluators call."""
