"""An ownCloud-compatible file server for TheAgentCompany's tasks, run inside a job's sandbox.

It serves one folder (the job's workspace) the way the benchmark's ownCloud serves the company's
files, on loopback under the benchmark's host name and port and with its credentials:

    remote.php/webdav/<path>, remote.php/dav/files/<user>/<path>   WebDAV (WsgiDAV): PROPFIND listings,
                                                                  GET, PUT, MKCOL, DELETE, MOVE, COPY
    ocs/v1.php|v2.php/apps/files_sharing/api/v1/shares             public link shares (OCS API, XML or JSON)
    index.php/s/<token>, s/<token>                                 a share's public page, with its download link
    index.php/s/<token>/download                                   the shared file (a folder: a zip)
    index.php/apps/files/?dir=/<path>                              the web interface's folder page (a listing)
    status.php                                                     the server's status, as ownCloud answers it

Shares live in a JSON file in a state folder outside what it serves, so the evaluator's server (a
second run over the agent's final files) finds the links the agent made; what the agent wrote
there is checked like any of its data (shares.py). Inside a sandbox it runs as the module
`fileserver` in an isolated interpreter, its parent folder put on sys.path explicitly and its
working folder its own code's (`run_evaluator.isolated`: nothing is imported from a folder the
agent wrote); only the standard library, WsgiDAV and cheroot are imported, since nothing of
RunningTab is importable there. From the project: `python -m eval.tac.fileserver`.
"""
