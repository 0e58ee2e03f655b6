"""How a run of install.py can end: the exit codes it promises, and the two ways a step stops.

Every module raises one of these two errors instead of printing or exiting, so that the command
line (cli.py) is the one place that turns a failure into one line on stderr and a stable code.
"""

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """The command line is wrong: exit 2."""


class Refusal(Exception):
    """A step cannot be carried out safely, or failed: exit 1."""
