"""One bounded echo: every field that repeats caller input (``cmd``, ``args``, guard and failure
messages, ``stderr.raw`` of a refusal) is cut with :func:`clip` and the same marker, so a 10 MB
argument cannot come back eight times (issue: amplification) and every surface cuts alike."""

from __future__ import annotations

ECHO_LIMIT = 256  # characters of one echoed value kept in messages
MARKER = "…[+{n} chars]"


def clip(text: str, limit: int = ECHO_LIMIT) -> str:
    """``text`` itself when it fits, else its first ``limit`` characters and the marker saying
    how many were left out (the marker is not counted in ``limit``)."""
    if len(text) <= limit:
        return text
    return text[:limit] + MARKER.format(n=len(text) - limit)


def clip_opt(text: str | None, limit: int = ECHO_LIMIT) -> str | None:
    return None if text is None else clip(text, limit)


def clip_all(texts: list[str], limit: int = ECHO_LIMIT) -> list[str]:
    """Each text clipped; the same list object when nothing was cut (no copy per call)."""
    if all(len(t) <= limit for t in texts):
        return texts
    return [clip(t, limit) for t in texts]
