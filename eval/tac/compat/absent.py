"""Stand-ins for the clients of services the evaluator's sandbox does not have (the base image's
`sotopia`, `rocketchat_API`; common's chat, GitLab and Plane helpers).

A stand-in imports as its package does, so an evaluator that only imports it runs (ds-format-excel-sheets
imports `sotopia.database.AgentProfile` and never uses it). Using it reports the service on the
progress pipe (`{"absent": SERVICE}`: the judge records it on the checkpoint made next, see
eval/tac/outcome.py) and raises ConnectionError, which the benchmark's `@grader` turns into a
failed checkpoint, as if the service were down.
"""

import importlib.abc
import importlib.machinery
import json
import logging
import os
import sys
import types


def report(service):
    """Tell the judge that the evaluator reached for `service`, which is not here."""
    fd = os.environ.get("RT_TAC_PROGRESS_FD", "")
    if fd.isdigit():
        try:
            os.write(int(fd), (json.dumps({"absent": service}) + "\n").encode())
        except OSError:
            pass


def unavailable(service, what):
    report(service)
    logging.error(f"{what}: {service} is not available here (no such service in the evaluator's sandbox)")
    return ConnectionError(f"{what}: {service} is not available here")


class _AbsentType(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise unavailable(cls._service, f"{cls.__qualname__}.{name}")

    def __call__(cls, *args, **kwargs):
        raise unavailable(cls._service, cls.__qualname__)


def absent_class(name, service):
    return _AbsentType(name, (), {"_service": service})


def _fill(module, service):
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = absent_class(name, service)
        setattr(module, name, value)
        return value

    module.__getattr__ = __getattr__
    module.__path__ = []  # a package: its submodules come from the finder below


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, top, service):
        self.top, self.service = top, service

    def find_spec(self, fullname, path, target=None):
        if fullname.startswith(self.top + "."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return types.ModuleType(spec.name)

    def exec_module(self, module):
        _fill(module, self.service)


def stand_in_package(name, service):
    """Make the package `name` (being imported) and every submodule of it a stand-in for `service`."""
    _fill(sys.modules[name], service)
    if not any(isinstance(f, _Finder) and f.top == name for f in sys.meta_path):
        sys.meta_path.append(_Finder(name, service))
