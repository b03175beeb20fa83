"""Errors of the host side that end a command with one line and an exit code."""


class UsageError(Exception):
    """Bad input from the user (file, flag, target): exit code 2, one line saying what is wrong and what to do."""
