"""A scripted agent that makes a reference deliverable (eval/tac/references.py) as an agent would, in
either file-server mode, and a judge model with rules for the evaluators' LLM questions: together
they check, without any API, that a task's full marks can be reached (bench/tac_solvable.py)."""

from __future__ import annotations

import base64
import re
from urllib.parse import quote

from eval.tac.references import Deliverable
from runners.core.messages import AssistantMessage

SERVER = "http://the-agent-company.com:8092"
AUTH = "-u theagentcompany:theagentcompany"


def agent_script(d: Deliverable, served: bool) -> list[dict]:
    """The scripted model's turns: read what the task names, write the deliverable where it goes
    (served: upload to the file server with curl, share through its OCS API), then finish."""
    turns = []
    for rel in d.reads:
        turns.append(_bash(f"curl -s {AUTH} '{SERVER}/remote.php/webdav/{quote(rel)}' | head -c 300" if served else f"head -c 300 '{rel}'"))
    for rel, name in d.fetch.items():
        turns.append(_bash(f"curl -sf {AUTH} -o '{name}' '{SERVER}/remote.php/webdav/{quote(rel)}'" if served else f"cp '{rel}' '{name}'"))
    for rel, data in d.local.items():
        turns.append(_bash(_write(rel, data)))
    for rel, data in d.data.items():
        turns.append(_bash(_write(f"/data/{rel}", data)))
    for rel, data in d.server.items():
        if not served:
            turns.append(_bash(_write(rel, data)))
            continue
        parents = [rel.rsplit("/", 1)[0].split("/")[: i + 1] for i in range(rel.count("/"))]
        mkcol = "; ".join(f"curl -s {AUTH} -X MKCOL '{SERVER}/remote.php/webdav/{quote('/'.join(p))}' >/dev/null" for p in parents)
        turns.append(_bash(f"{_write('/tmp/upload', data)}\n{mkcol}; curl -sf {AUTH} -T /tmp/upload '{SERVER}/remote.php/webdav/{quote(rel)}'"))
    if d.script:
        turns.append(_bash(f"python - <<'PY'\n{d.script}\nPY"))
    if d.share:
        url = f"{SERVER}/remote.php/webdav/{quote(d.share)}"
        if served and not d.plain_link:
            ocs = f"{SERVER}/ocs/v2.php/apps/files_sharing/api/v1/shares?format=json"
            turns.append(_bash(f"curl -s {AUTH} -d 'path=/{d.share}&shareType=3' '{ocs}' | python -c "
                               "'import json,sys; print(json.load(sys.stdin)[\"ocs\"][\"data\"][\"url\"])' > link.txt; cat link.txt"))
        else:
            turns.append(_bash(f"echo '{url}' > link.txt"))
    return [*turns, {"content": "Done."}]


def _bash(command: str) -> dict:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def _write(path: str, data: bytes) -> str:
    b64 = base64.b64encode(data).decode()
    lines = "\n".join(b64[i : i + 76] for i in range(0, len(b64), 76))
    return f"mkdir -p \"$(dirname '{path}')\" && base64 -d > '{path}' <<'B64'\n{lines}\nB64"


class RuleJudge:
    """A judge model with rules: an image question is "yes" when a PNG is attached; a text question
    is "yes" when the content is not empty and holds every `backquoted` answer of the predicate."""

    name = "rule-judge"

    def complete(self, messages, tools) -> AssistantMessage:
        parts = messages[0]["content"]
        parts = parts if isinstance(parts, list) else [{"type": "text", "text": parts}]
        text = next((p["text"] for p in parts if p.get("type") == "text"), "")
        image = next((p["image_url"]["url"] for p in parts if p.get("type") == "image_url"), None)
        if image is not None:
            ok = base64.b64decode(image.split(",", 1)[-1] or "AA==")[:8] == b"\x89PNG\r\n\x1a\n"
        else:
            m = re.match(r'Does the content """(.*)""" indicate (.*?)\? Please answer', text, re.S)
            ok = bool(m and m.group(1).strip()) and all(a.lower() in m.group(1).lower() for a in re.findall(r"`([^`]+)`", m.group(2)))
        return AssistantMessage(content="yes" if ok else "no")
