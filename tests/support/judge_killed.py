"""`reporter judge --run` that SIGKILLs itself right after its N-th batch's raw lines are fsynced.

The crash tests' seam, as tests/support/screen_killed.py for the screen: run as
`python tests/support/judge_killed.py WORKSPACE WEEK N`, it judges the week as the command does, passing
run_judge's `after_raw_written` (the replies on disk, their rows not yet written).
"""

from __future__ import annotations

import os
import signal
import sys

from reporter.config import load_workspace
from reporter.digest.judge.run import run_judge


def main(workspace: str, week: str, nth: int) -> None:
    def kill_at(batches: int) -> None:
        if batches >= nth:
            os.kill(os.getpid(), signal.SIGKILL)

    run_judge(load_workspace(workspace).digest, [week], environ=os.environ, progress=False, after_raw_written=kill_at)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
