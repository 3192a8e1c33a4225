"""Ray's notices that a local sweep does not need to print on every run.

Ray 2.5x starts a new local cluster with token authentication on (a token in `~/.ray/auth_token`,
made once) and says so on every `ray.init()`: "Token authentication is enabled for this Ray cluster.
Set RAY_AUTH_MODE=disabled to opt out." The protection is what a sweep wants, so it stays on; only
that notice is dropped. Ray's warnings that authentication is *disabled*, and every other message,
are kept. Setting `RAY_AUTH_MODE=token` would silence it too, but Ray reads the mode once per process
(at import), so setting it later leaves the driver without its token.
"""

from __future__ import annotations

import logging

AUTH_LOGGER = "ray._private.authentication.authentication_token_setup"
ENABLED_NOTICE = "Token authentication is enabled for this Ray cluster"


class _DropEnabledNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(ENABLED_NOTICE)


def quiet_token_auth_notice() -> None:
    """Drop Ray's "token authentication is enabled" notice from this process (once; idempotent)."""
    logger = logging.getLogger(AUTH_LOGGER)
    if not any(isinstance(f, _DropEnabledNotice) for f in logger.filters):
        logger.addFilter(_DropEnabledNotice())
