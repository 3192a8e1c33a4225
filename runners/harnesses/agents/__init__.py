"""The production harnesses, one module each, named as `agent.harness` names them; each holds `HARNESS`
(a `runners.harnesses.harness.Harness`). A new one is a module here, its wire (when it speaks a new
API) in `runners/harnesses/bridge/`, its config group `conf/agent/<name>.yaml` and its tests."""
