"""The two kinds of failure a command reports: bad input (exit 2) and internal (exit 1)."""


class InputError(Exception):
    """Bad input from the user: the message says which file and what to fix (exit 2)."""


class InternalError(Exception):
    """An invariant of the engine did not hold: a bug, never the user's fault (exit 1)."""

