"""Stand-ins for TheAgentCompany's helper modules (`common`, `scoring`, `config`).

Evaluators import them by their top-level names, so this folder itself goes on the evaluator
subprocess's `sys.path`; RunningTab code imports only `scoring` (pure) as `eval.tac.compat.scoring`.
"""
