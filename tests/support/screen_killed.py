"""`reporter screen --run` that SIGKILLs itself right after its N-th batch's raw lines are fsynced.

The crash tests' seam: run as `python tests/support/screen_killed.py WORKSPACE N`, it screens the
newest release as the command does, passing run_screen's `after_raw_written` (the one moment a crash
test cannot aim at from outside: the replies on disk, their vote rows not yet written).
"""

from __future__ import annotations

import os
import signal
import sys

from reporter.config import load_workspace
from reporter.commands.screen import release_dir_for
from reporter.screening.run import run_screen


def main(workspace: str, nth: int) -> None:
    def kill_at(batches: int) -> None:
        if batches >= nth:
            os.kill(os.getpid(), signal.SIGKILL)

    ws = load_workspace(workspace)
    run_screen(ws, release_dir_for(ws, None), tiers=("cheap", "expensive"), environ=os.environ, progress=False,
               after_raw_written=kill_at)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
