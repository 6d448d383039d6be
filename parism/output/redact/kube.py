"""Kubernetes Secret objects: mask every value under ``data`` / ``stringData``.

Why a rule of its own: the values of a Secret are plain base64 with no recognisable prefix, so no
single-token pattern can find them; what identifies them is *where* they are. A regex cannot
follow nesting in general, but Secret data maps are flat (string → string), so two linear steps
suffice:

- JSON (``kubectl get secret -o json``, also the escaped copy inside the
  ``last-applied-configuration`` annotation): find ``"data": { … }`` blocks that contain no
  nested braces and mask each string value inside, keeping the quotes so the JSON stays valid;
- YAML (``-o yaml``): mask the value of every key indented under a ``data:`` / ``stringData:``
  line.

The rule only runs when the text declares ``kind: Secret`` (JSON or YAML), so ConfigMaps and
other objects with a ``data`` map are left alone unless they are listed together with a Secret
(over-masking is the safe side).
"""

from __future__ import annotations

import re2

from parism.output.redact.engine import compile_re2

# Without a match of this, no span is masked: the redactor's one-pass gate includes it.
KIND_SECRET_SOURCE = (
    r"(?m)(?:\\?\"kind\\?\"\s*:\s*\\?\"Secret\\?\"|^\s*kind:\s*[\"']?Secret[\"']?\s*$)"
)
_KIND_SECRET = compile_re2(KIND_SECRET_SOURCE)
_JSON_BLOCK = compile_re2(r"\\?\"(?:data|stringData)\\?\"\s*:\s*\{(?P<body>[^{}]*)\}")
_JSON_VALUE = compile_re2(r":\s*\\?\"(?P<value>(?:[^\"\\]|\\[^\"])*)\\?\"")
_YAML_HEADER = compile_re2(r"(?m)^(?P<indent>[ \t]*(?:- )?)(?:data|stringData):[ \t]*$")
_YAML_ENTRY = compile_re2(r"^(?P<indent>[ \t]+)[^\s:#][^:]*:[ \t]*(?P<value>\S.*?)[ \t]*$")


def secret_data_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the values of Kubernetes Secret data maps in ``text``."""
    if _KIND_SECRET.search(text) is None:
        return []
    return _json_spans(text) + _yaml_spans(text)


def _group_span(match: re2._Match, name: str, pattern: re2._Regexp) -> tuple[int, int]:
    return match.span(pattern.groupindex[name])


def _json_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for block in _JSON_BLOCK.finditer(text):
        start, end = _group_span(block, "body", _JSON_BLOCK)
        for value in _JSON_VALUE.finditer(text[start:end]):
            v_start, v_end = _group_span(value, "value", _JSON_VALUE)
            if v_end > v_start:
                spans.append((start + v_start, start + v_end))
    return spans


def _yaml_spans(text: str) -> list[tuple[int, int]]:
    """Walk the lines after each ``data:`` header while they are indented deeper than it.

    A line at the first key indent is ``key: value`` (the value is masked); any deeper line is
    the continuation of a block scalar (``key: |``) and is masked whole.
    """
    spans: list[tuple[int, int]] = []
    for header in _YAML_HEADER.finditer(text):
        base = len(header.group(1))
        key_indent: int | None = None
        pos = header.end() + 1
        while pos < len(text):
            line_end = text.find("\n", pos)
            line_end = len(text) if line_end < 0 else line_end
            line = text[pos:line_end]
            content = line.lstrip(" \t").rstrip()
            indent = len(line) - len(line.lstrip(" \t"))
            if content and indent <= base:
                break
            entry = _YAML_ENTRY.match(line) if content else None
            if entry is not None and key_indent in (None, indent):
                key_indent = indent
                v_start, v_end = _group_span(entry, "value", _YAML_ENTRY)
                spans.append((pos + v_start, pos + v_end))
            elif content:
                spans.append((pos + indent, pos + indent + len(content)))
            pos = line_end + 1
    return spans
