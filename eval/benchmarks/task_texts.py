"""The words loaders add to a benchmark's own task text (kept in one place)."""

# Workspace-Bench: the record's `output_files`, as its harness names them to the agent.
WORKSPACE_BENCH_OUTPUTS = "\n\nExpected output file(s): {files}"

# TheAgentCompany: the file server is mounted into the workspace instead of served over HTTP (no server,
# so no share links: the agent is told so).
AGENTCOMPANY_PREFACE = (
    "Note: the company's file server (ownCloud, http://the-agent-company.com:8092) is mounted in your "
    "workspace instead of being served as a website: no server runs, so nothing can be fetched from that "
    "address and no share link can be made. A file-server path such as "
    "/Documents/Financials/budget.xlsx is the workspace file Documents/Financials/budget.xlsx, and "
    "/workspace is the workspace root. To upload or save a file to the file server, write it at the "
    "corresponding workspace path.\n\n"
)

# TheAgentCompany with benchmark.file_server=served: the server runs, as in the benchmark; the
# browser the benchmark logs in beforehand is replaced by the credentials.
AGENTCOMPANY_SERVED_PREFACE = (
    "Note: the company's file server is ownCloud at http://the-agent-company.com:8092 (user "
    "theagentcompany, password theagentcompany). /workspace is your workspace root.\n\n"
)

# OfficeQA Pro: where the corpus is and how to give the answer (the reward reads the last tag).
OFFICEQA_SUFFIX = (
    "\n\nThe U.S. Treasury Bulletins are the files of your workspace (treasury_bulletin_YYYY_MM.*). "
    "End your final message with the answer alone inside tags: <FINAL_ANSWER>answer</FINAL_ANSWER>."
)
