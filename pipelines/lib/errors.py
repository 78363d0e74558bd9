"""Errors a user can act on: the CLI prints them as one line, never a traceback."""


class RailbirdError(Exception):
    """Something the user can fix: a missing file, a bad argument, a locked warehouse.

    The message says what is wrong and where (file and line when there is one).
    """
