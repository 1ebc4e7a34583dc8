"""Frozen critics (rewards). Importing this package registers every reward."""
