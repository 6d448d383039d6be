"""The in-memory result store (contract §13) and its cursors; see ``cursor.py``."""
