"""Stand-in for `litellm`, the LLM client the benchmark's base image installs: `completion` asks
RunningTab's judge model (common.llm_complete, the judge socket), as the benchmark's helpers ask
theirs; its answer reads as litellm's does (`r.choices[0].message.content` or
`r["choices"][0]["message"]["content"]`, and `r.json()`). The model an evaluator names is the
judge's, as for every LLM checkpoint (docs/benchmarks.md). Evaluators also take Python's `logging`
from it (`from litellm import logging`), as litellm's own module namespace has it."""

import logging  # noqa: F401 - `from litellm import logging` (admin-get-best-vendor-quote)


class _Reply(dict):
    """A dict whose keys also read as attributes, like litellm's ModelResponse."""

    def __getattr__(self, name):
        try:
            value = self[name]
        except KeyError:
            raise AttributeError(name) from None
        return _wrap(value)

    def __getitem__(self, key):
        return _wrap(dict.__getitem__(self, key))

    def json(self):
        return dict(self)


def _wrap(value):
    if isinstance(value, dict) and not isinstance(value, _Reply):
        return _Reply(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def completion(model=None, messages=None, **kwargs):
    from common import llm_complete

    return _Reply(llm_complete(messages or []))
