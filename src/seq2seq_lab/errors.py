"""Errors caused by user input. Entry points print them as one line, without a traceback.

Each message names the file and line, or the config key, and says what was expected.
"""


class UserError(Exception):
    """Base class: bad input from the user (data, config, checkpoint), not a bug."""


class DataError(UserError):
    """A data file is missing, corrupt or inconsistent (the message names file and line)."""


class ConfigError(UserError):
    """A configuration value is invalid (the message names the key and the valid values)."""


class CheckpointError(UserError):
    """A checkpoint cannot be used as asked (missing, or from another model family)."""
