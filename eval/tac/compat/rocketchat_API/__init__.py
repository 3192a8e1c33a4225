"""Stand-in for `rocketchat_API`, the chat server's client the base image installs (absent.py)."""

from absent import stand_in_package

stand_in_package(__name__, "chat")
