"""Errors a user can act on. The CLI prints them as one line and exits non-zero; never a traceback."""

from __future__ import annotations


class UserError(Exception):
    """Bad input or environment: `str(err)` is the one line the user sees (name the file and place)."""

    exit_code = 2


class DataError(UserError):
    """A data file cannot be read: the message is `file:location: message`."""

    def __init__(self, file: object, location: str, message: str) -> None:
        where = f"{file}:{location}" if location else f"{file}"
        super().__init__(f"{where}: {message}")
        self.file = str(file)
        self.location = location
        self.message = message
