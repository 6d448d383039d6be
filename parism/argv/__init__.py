"""Argument reading shared by the guard and the parser contracts (``tokenize.py``)."""
