"""The error every config problem raises: its message names the file and line (or the binding) and the fix."""

from __future__ import annotations


class ConfigError(ValueError):
    """A config file or binding is wrong; the message names the place and the fix."""
