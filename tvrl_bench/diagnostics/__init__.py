"""What the scripts of diagnostics/ share: the credit screens' statistics (screens.py)."""
