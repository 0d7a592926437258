"""The host's user-facing error: one line on stderr, exit status 2."""


class UserError(Exception):
    """A problem with the user's input, files or devices (not a bug)."""
