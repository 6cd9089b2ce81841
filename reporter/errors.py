"""The kinds of failure a command reports: bad input (exit 2), internal (exit 1), and a run aborted by a signal."""


class InputError(Exception):
    """Bad input from the user: the message says which file and what to fix (exit 2)."""


class InternalError(Exception):
    """An invariant of the engine did not hold: a bug, never the user's fault (exit 1)."""



class Aborted(KeyboardInterrupt):
    """A run aborted at once by a second SIGINT or SIGTERM: exit 128 plus the signal's number, as a shell says it
    (130 for Ctrl-C, 143 for SIGTERM)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
