"""The files of a Harbor trial directory (Harbor's names, spelled here once; some share our record's
names but are Harbor's own documents):

    <trial>/result.json               Harbor's TrialResult (task, agent, model, rewards, timing, errors)
    <trial>/agent/trajectory.json     the agent's trajectory as ATIF
    <trial>/verifier/reward.json      the rewards (a flat map of numbers)
    <trial>/verifier/scores.json      our judge's verdicts (eval/harbor/verify.py)
    <trial>/verifier/runningtab/      our job record of the trial (eval/harbor/verify.py)
    <trial>/artifacts/runningtab/     the tab's record folder (tab.json), when the tab ran
"""

TRIAL_RESULT = "result.json"
TRAJECTORY = "agent/trajectory.json"
REWARD = "verifier/reward.json"
SCORES = "verifier/scores.json"
RECORD = "verifier/runningtab"
# A job record copied into or out of a trial: its deliverable's caps (envs.config) and room for the rest.
RECORD_MAX_FILES = 20_000
RECORD_MAX_BYTES = 2 << 30
TAB_ARTIFACT = "artifacts/runningtab"
