"""The result tools: the in-memory result store (contract §13), its cursors (``cursor.py``), run's
budgeted page (``answer.py``), fetch, evidence and compare."""
