"""One module per corpus command key (``ls``, ``git_log`` for ``git-log`` ...).

Each exports ``check(parsed, expected, entry) -> list[str]``: the mismatches between Parism's
``parsed`` and jc's independent parse ``expected`` (list or dict as jc wrote it), following the
field mapping of the corpus README. An empty list means every mapped field agrees.
"""
