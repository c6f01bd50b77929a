"""The `opportunity` command's entry point: the command (`cli.main`), imported only once a stop is told in one line
(`stopping`), since importing Dagster, DuckDB and polars takes seconds a user may interrupt."""

from __future__ import annotations

import sys

from opportunity_assets.stopping import STOPPED, is_interruption, stop_arrived, stop_on_sigterm

INTERRUPTED = 130
"""The exit code of a command stopped by its user, as a shell gives one killed by SIGINT (128 + 2)."""


def main() -> int:
    stop_on_sigterm()
    try:
        from opportunity_assets.cli import main as command

        if stop_arrived():  # (one the import swallowed: `stopping._stop_kept_quiet`)
            raise KeyboardInterrupt
        return command()
    except BaseException as exc:
        if not (is_interruption(exc) or stop_arrived()):
            raise
        print(f"opportunity: {STOPPED}", file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":  # (`python -m opportunity_assets.command`: trial 60's did nothing, exit 0)
    sys.exit(main())
