"""TheAgentCompany's `config` module: service addresses as the evaluators expect them.

Only the file server runs (RunningTab's ownCloud-compatible server in the evaluator's sandbox); the
other services do not exist here, so helpers that would call them fail inside `@grader` and score
their checkpoint 0. No secrets: these are the benchmark's public default credentials, sent only to
that server on the sandbox's loopback.
"""

import os

SERVER_HOSTNAME = os.getenv("SERVER_HOSTNAME") or "the-agent-company.com"
OWNCLOUD_PORT = os.getenv("OWNCLOUD_PORT") or "8092"
OWNCLOUD_URL = f"http://{SERVER_HOSTNAME}:{OWNCLOUD_PORT}"
OWNCLOUD_USERNAME = "theagentcompany"
OWNCLOUD_PASSWORD = "theagentcompany"
GITLAB_PORT = os.getenv("GITLAB_PORT") or "8929"
GITLAB_BASEURL = f"http://{SERVER_HOSTNAME}:{GITLAB_PORT}"
GITLAB_USER = "root"
GITLAB_ACCESS_TOKEN = ""
GITLAB_HEADERS = {"PRIVATE-TOKEN": GITLAB_ACCESS_TOKEN}
ROCKETCHAT_PORT = os.getenv("ROCKETCHAT_PORT") or "3000"
ROCKETCHAT_URL = f"http://{SERVER_HOSTNAME}:{ROCKETCHAT_PORT}"
PLANE_PORT = os.getenv("PLANE_PORT") or "8091"
PLANE_HOSTNAME = SERVER_HOSTNAME
PLANE_BASEURL = f"http://{SERVER_HOSTNAME}:{PLANE_PORT}"
PLANE_WORKSPACE_SLUG = "tac"
PLANE_HEADERS = {"x-api-key": "", "Content-Type": "application/json"}
TEST_MODE = False
