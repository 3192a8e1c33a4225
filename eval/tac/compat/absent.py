"""Stand-ins for the clients of services the evaluator's sandbox does not have (the base image's
`sotopia`, `rocketchat_API`; common's chat, GitLab and Plane helpers), and the bookkeeping of which
checkpoint reached for one.

A stand-in imports as its package does, so an evaluator that only imports it runs (ds-format-excel-sheets
imports `sotopia.database.AgentProfile` and never uses it). Using it reports the service (`report`)
and raises ConnectionError, which the benchmark's `@grader` turns into a failed checkpoint, as if the
service were down; common's helpers report and return nothing. run_evaluator.py also reports a
program the image would have and this sandbox lacks (`psql`) and a connection to another service's
port.

Which checkpoint a report makes unreachable (`take`, asked as each checkpoint is made): a service
reached while a `@grader` function runs, the checkpoint made next; one reached outside every grader
(when the evaluator loads, or in `grade_checkpoints` itself, fetching what several checkpoints then
read), every checkpoint made after it. An unreachable checkpoint is never passed: run_evaluator.py
scores it 0 (docs/benchmarks.md).
"""

import importlib.abc
import importlib.machinery
import logging
import sys
import types

_grading = [0]  # depth of @grader calls under way (common.grader counts it)
_pending = []  # services reached inside a grader since the last checkpoint was made
_sticky = []  # services reached outside every grader: they reach every later checkpoint


def report(service):
    """The evaluator reached for `service`, which is not here."""
    target = _pending if _grading[0] > 0 else _sticky
    if service not in target:
        target.append(service)


def take():
    """The services the checkpoint being made now reached for (its grader's, and every earlier one
    reached outside a grader)."""
    services = list(dict.fromkeys([*_sticky, *_pending]))
    _pending.clear()
    return services


class grading:
    """Counts a @grader call under way (common.grader)."""

    def __enter__(self):
        _grading[0] += 1

    def __exit__(self, *exc):
        _grading[0] -= 1
        return False


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
