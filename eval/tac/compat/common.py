"""TheAgentCompany's `common` module: the same names and signatures as `workspaces/base_image/common.py`.

The file-server helpers speak to the company's file server as the benchmark's do (WebDAV with the
benchmark's credentials, share links fetched without any): inside the evaluator's sandbox that is
RunningTab's ownCloud-compatible server (eval/tac/fileserver) over the agent's final files, on
loopback under the benchmark's host name and port. `llm_complete` goes to RunningTab's judge
through the HTTP endpoint on the Unix socket `RT_TAC_LLM_SOCKET` (cached there), and
`evaluate_with_llm` asks TheAgentCompany's own yes/no question. Helpers for services other than
the file server (chat, GitLab, Plane) are not available in the file-server-only subset: they log
an error and return an empty value, so the checkpoint that needs them scores 0 as it would if the
service failed.
"""

from __future__ import annotations

import base64
import functools
import http.client
import json
import logging
import os
import re
import socket
import xml.etree.ElementTree as ET

import requests
from absent import grading as _grading
from absent import report as _report
from config import *  # noqa: F403 - evaluators expect `from common import *` to bring these too
from config import OWNCLOUD_PASSWORD, OWNCLOUD_URL, OWNCLOUD_USERNAME
from requests.auth import HTTPBasicAuth

logging.basicConfig(level=logging.INFO)

IMAGE_JPEG = "image/jpeg"
IMAGE_PNG = "image/png"


def grader(func):
    """A checkpoint function: an exception or None counts as False (the benchmark's own rule)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            with _grading():  # a service reached now makes this checkpoint unreachable (absent.py)
                result = func(*args, **kwargs)
            if result is None:
                logging.warning("Grader returns None, using False instead")
                return False
            return result
        except Exception as e:  # noqa: BLE001
            logging.error(f"Error in {func.__name__}: {e}")
            return False

    return wrapper


class _SocketHTTP(http.client.HTTPConnection):
    def __init__(self, path: str):
        super().__init__("judge", timeout=600)
        self._path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(600)
        self.sock.connect(self._path)


def llm_complete(messages):
    """One chat completion through RunningTab's judge, in the litellm response shape."""
    path = os.environ.get("RT_TAC_LLM_SOCKET")
    if not path:
        raise RuntimeError("no judge endpoint for LLM checkpoints (RT_TAC_LLM_SOCKET is not set)")
    conn = _SocketHTTP(path)
    try:
        conn.request("POST", "/complete", json.dumps({"messages": messages}), {"Content-Type": "application/json"})
        resp = conn.getresponse()
        body = json.loads(resp.read())
    finally:
        conn.close()
    if resp.status != 200:
        raise RuntimeError(body.get("error", f"judge endpoint answered {resp.status}"))
    content = body["content"]
    return {"choices": [{"message": {"content": content, "role": "assistant"}}]}


def evaluate_with_llm(content: str, predicate: str, additional_prompt: str = "", image_path: str | None = None, image_type: str = IMAGE_JPEG):
    """Whether the LLM judges that `content` (and/or an image) indicates `predicate`."""
    if image_path is not None and image_type not in [IMAGE_JPEG, IMAGE_PNG]:
        logging.warning(f"Invalid image type: {image_type}")
        return False
    if not content and not image_path:
        logging.warning("Both content and image are empty, cannot evaluate")
        return False
    if content and image_path:
        query = f'Does the content """{content}""" and following picture indicate {predicate}?'
    elif content:
        query = f'Does the content """{content}""" indicate {predicate}?'
    else:
        query = f"Does the following picture indicate {predicate}?"
    query += f' Please answer "yes" if it does, or "no" if it does not. {additional_prompt}'
    parts = [{"type": "text", "text": query}]
    if image_path:
        try:
            with open(image_path, "rb") as f:
                b64 = base64.b64encode(f.read()).decode("utf-8")
        except Exception as e:  # noqa: BLE001
            logging.error(f"Failed to read image from {image_path}: {e}")
            return False
        parts.append({"type": "image_url", "image_url": {"url": f"data:{image_type};base64,{b64}"}})
    try:
        reply = llm_complete([{"role": "user", "content": parts}])  # a list of parts, image or not, as the benchmark sends
        answer = reply["choices"][0]["message"]["content"].lower().strip()
        return "yes" in answer
    except Exception as e:  # noqa: BLE001
        logging.error(f"Failed to evaluate message: {e}")
        return False


def _webdav(dir_name: str, file_name: str = "") -> str:
    return f"{OWNCLOUD_URL}/remote.php/webdav/{dir_name}" + (f"/{file_name}" if file_name else "")


def _auth() -> HTTPBasicAuth:
    return HTTPBasicAuth(OWNCLOUD_USERNAME, OWNCLOUD_PASSWORD)


def _hrefs(text: str) -> list[str]:
    return [el.text or "" for el in ET.fromstring(text).findall(".//{DAV:}response/{DAV:}href")]


def check_file_in_owncloud_directory(file_name, dir_name):
    """True if an href of the folder's WebDAV listing contains `file_name`; None if the listing fails."""
    try:
        resp = requests.request("PROPFIND", _webdav(dir_name), headers={"Depth": "1"}, auth=_auth())
    except requests.RequestException as e:
        logging.warning(f"Failed to check file in owncloud directory: {e}")
        return False
    if resp.status_code != 207:
        logging.error(f"Error: {resp.status_code}, {resp.text}")
        return None
    found = any(file_name in href for href in _hrefs(resp.text))
    logging.info(f"File '{file_name}' {'found' if found else 'not found'}.")
    return found


def get_binary_file_content_owncloud(file_name, dir_name):
    try:
        resp = requests.get(_webdav(dir_name, file_name), auth=_auth())
    except requests.RequestException as e:
        logging.warning(f"Failed to get binary file content from owncloud: {e}")
        return None
    return resp.content if resp.status_code == 200 else None


def check_and_download_file(file_name, dir_name, output_file_path):
    """Find `file_name` in the folder's listing (by href substring), then download it there."""
    folder = f"{OWNCLOUD_URL}/remote.php/webdav/{dir_name.strip('/')}/"
    try:
        resp = requests.request("PROPFIND", folder, headers={"Depth": "1"}, auth=_auth())
        if resp.status_code != 207:
            logging.error(f"Error checking directory. HTTP Status: {resp.status_code}")
            return False
        if not any(file_name in href for href in _hrefs(resp.text)):
            logging.warning(f"File '{file_name}' not found in directory '{dir_name}'.")
            return False
        got = requests.get(folder + file_name, auth=_auth(), stream=True)
        if got.status_code != 200:
            logging.error(f"Failed to download file '{file_name}'. HTTP Status: {got.status_code}")
            return False
        with open(output_file_path, "wb") as f:
            for chunk in got.iter_content(chunk_size=65536):
                f.write(chunk)
        return True
    except requests.RequestException as e:
        logging.warning(f"Failed to check or download file in ownCloud directory: {e}")
        return False


_DOWNLOAD_LINK = re.compile(r'https?://[^\s]*\bdownload\b[^\s]*(?=")')


def download_owncloud_content(link: str, output_file_path: str):
    """Download what a share link points to, as the benchmark does: a link containing "download" is
    fetched as it is; otherwise its page is fetched (no credentials) and the first absolute URL
    with "download" in it that ends at a quote is fetched. Both fetches are anonymous; the final
    one counts as done whatever it answers (the benchmark's `curl` without `-f`)."""
    if not link:
        return False
    link = link.rstrip("\n")
    if "download" not in link:
        try:
            page = requests.get(link, allow_redirects=False).text
        except (requests.RequestException, ValueError) as e:
            logging.warning(f"Unable to download from link: {link} due to {e}")
            return False
        matches = _DOWNLOAD_LINK.findall(page)
        if not matches:
            logging.warning("Did not find proper download link")
            return False
        link = matches[0]
    try:
        resp = requests.get(link, allow_redirects=False)
        with open(output_file_path, "wb") as f:
            f.write(resp.content)
    except (requests.RequestException, ValueError, OSError) as e:
        logging.warning(f"Download from link: {link} not successful: {e}")
    logging.info(f"Successfully downloaded from link {link}")
    return True


def get_owncloud_url_in_file(filename: str):
    try:
        with open(filename) as f:
            content = f.read()
        return content if OWNCLOUD_URL in content else False
    except OSError as e:
        logging.error(f"Error reading {filename}: {e}")
        return False


def check_repo_exists(project_name: str):
    files = {"openhands": ".openhands_instructions", "janusgraph": ".backportrc.json", "colly": "xmlelement_test.go",
             "streamlit": ".ruff.toml", "risingwave": "risedev.yml", "bustub": "CMakeLists.txt"}
    return project_name in files and os.path.isfile(os.path.join("/workspace", project_name, files[project_name]))


def get_all_texts_from_slide(slide):
    if slide is None:
        return ""
    return " ".join(shape.text_frame.text.lower() for shape in slide.shapes if shape.has_text_frame)


class MockRocketChatClient:
    """The chat client when the chat is not here: every call reports it and answers nothing, so a
    check such as "nobody left to message" cannot pass on a chat that is not there (absent.py)."""

    class JsonResponse:
        def json(self):
            return {"users": [], "messages": []}

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)

        def call(*args, **kwargs):
            _report("chat")
            logging.error(f"rocket.{name}: chat is not available offline (file-server-only subset)")
            return self.JsonResponse()

        return call


def _unavailable(name: str, value, service: str = ""):
    service = service or ("plane" if "plane" in name else "gitlab" if "gitlab" in name else "chat")

    def helper(*args, **kwargs):
        _report(service)
        logging.error(f"{name}: {service} is not available offline (file-server-only subset)")
        return value() if callable(value) else value

    helper.__name__ = name
    return helper


def create_rocketchat_client(username="theagentcompany", password="theagentcompany"):
    """A client whose calls report the chat (evaluators make it when they load: that alone reaches
    for no checkpoint)."""
    logging.error("create_rocketchat_client: chat is not available offline (file-server-only subset)")
    return MockRocketChatClient()


get_rocketchat_personal_chat_history = _unavailable("get_rocketchat_personal_chat_history", list)
num_rocketchat_users_contacted = _unavailable("num_rocketchat_users_contacted", 0)
get_rocketchat_channel_history = _unavailable("get_rocketchat_channel_history", list)
get_rocketchat_channel_room_id = _unavailable("get_rocketchat_channel_room_id", None)
check_rocketchat_message_posted = _unavailable("check_rocketchat_message_posted", False)
evaluate_chat_history_with_llm = _unavailable("evaluate_chat_history_with_llm", False)
download_image_from_url = _unavailable("download_image_from_url", None, "the network")
make_gitlab_request = _unavailable("make_gitlab_request", None)
get_gitlab_project_id = _unavailable("get_gitlab_project_id", None)
get_gitlab_merge_request_by_title = _unavailable("get_gitlab_merge_request_by_title", None)
get_gitlab_file_in_mr = _unavailable("get_gitlab_file_in_mr", None)
get_all_plane_projects = _unavailable("get_all_plane_projects", list)
get_plane_project_id = _unavailable("get_plane_project_id", None)
get_plane_project_all_issues = _unavailable("get_plane_project_all_issues", list)
get_plane_state_id_dict = _unavailable("get_plane_state_id_dict", lambda: ({}, {}))
get_plane_issue_details = _unavailable("get_plane_issue_details", None)
get_plane_cycle_details = _unavailable("get_plane_cycle_details", None)
get_plane_issues_by_project_cycle = _unavailable("get_plane_issues_by_project_cycle", list)
get_plane_state_details = _unavailable("get_plane_state_details", dict)
create_plane_issue = _unavailable("create_plane_issue", None)
add_plane_issue_to_cycle = _unavailable("add_plane_issue_to_cycle", None)
