"""Evidence spans over real outputs: every span's bytes are the value (verbatim) or give it under
the named transform (derived), whatever lines of the output are kept; every provider parser is
covered; a parse without evidence is untouched."""

from __future__ import annotations

from collections import defaultdict
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from parism.results.evidence import PROVIDERS, ROW_TRANSFORM, spans_of, verify
from parism.results.evidence import locate
from parism.results.evidence.locate import _flat
from tests.unit.results.samples import Sample, samples

SAMPLES = samples()


def check_spans(sample: Sample, mode: str = "fields") -> tuple[int, int, int, int]:
    """Assert every span verifies and lies in its line; (values with a span, values, rows with
    a span, rows)."""
    outcome = sample.parse()
    parsed, parser = outcome.parsed, outcome.parser
    assert parser is not None
    ev = locate(sample.text, parsed, parser.rows_key, parser.id, mode)
    data = sample.text.encode("utf-8")
    sep = 0 if ev.records else 0x0A  # NUL records: span.line counts records
    line_starts = [0] + [n + 1 for n, b in enumerate(data) if b == sep]
    found = total = 0
    for path, value in _flat(parsed):
        total += 1
        span = spans_of(ev, list(path))
        if span is None:
            continue
        found += 1
        assert 0 <= span.start <= span.end <= len(data), (sample.label, path)
        text = data[span.start:span.end].decode("utf-8")
        assert verify(text, value, span.transform), (sample.label, path, value, text, span)
        line_end = line_starts[span.line] - 1 if span.line < len(line_starts) else len(data)
        assert line_starts[span.line - 1] <= span.start and span.end <= line_end, (sample.label, path, span)
    rows = parsed.get(parser.rows_key) if isinstance(parsed, dict) and parser.rows_key else None
    n_rows = len(rows) if isinstance(rows, list) else 0
    row_spans = 0
    for i in range(n_rows):
        span = spans_of(ev, [parser.rows_key, str(i)])
        if span is not None and span.transform == ROW_TRANSFORM:
            assert data[span.start:span.end].strip(), (sample.label, i)
            row_spans += 1
        elif span is not None:  # a scalar row (find paths): the row is its own value
            row_spans += 1
    return found, total, row_spans, n_rows


def test_samples_cover_every_provider() -> None:
    ids = {s.parse().parser.id for s in SAMPLES}  # type: ignore[union-attr]
    # systemctl-list-unit-files, docker-images have no real sample here; every other provider has
    assert PROVIDERS - ids <= {"systemctl-list-unit-files", "docker-images", "kubectl-get-events", "kubectl-get"}, \
        sorted(PROVIDERS - ids)


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.label for s in SAMPLES])
def test_every_span_verifies_and_every_row_is_located(sample: Sample) -> None:
    found, total, row_spans, n_rows = check_spans(sample)
    assert row_spans == n_rows, f"{sample.label}: {n_rows - row_spans} of {n_rows} rows not located"
    assert total == 0 or found > 0, f"{sample.label}: no value has a span"


def test_share_of_values_with_a_span_per_parser() -> None:
    """Per parser over all its samples: most values are located (computed values such as ls
    ``type``, git ``xy`` of the long format or du ``block_size`` have no text of their own)."""
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for s in SAMPLES:
        found, total, _, _ = check_spans(s)
        acc = per[s.parse().parser.id]  # type: ignore[union-attr]
        acc[0] += found
        acc[1] += total
    low = {pid: f"{f}/{t}" for pid, (f, t) in per.items() if t and f / t < 0.5}
    assert not low, low


def _subset(sample: Sample, keep: list[bool]) -> Sample:
    lines = sample.text.split("\n")
    head = 2 if sample.cmd in ("ps", "df", "netstat", "ss", "lsof", "docker", "kubectl", "helm", "systemctl", "free") else 0
    kept = lines[:head] + [ln for ln, k in zip(lines[head:], keep * (len(lines) // max(1, len(keep)) + 1)) if k]
    return Sample(sample.label + ":subset", sample.cmd, sample.args, "\n".join(kept), sample.os, sample.now_year)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SAMPLES), st.lists(st.booleans(), min_size=1, max_size=12), st.sampled_from(["rows", "fields"]))
def test_spans_verify_on_any_subset_of_the_lines(sample: Sample, keep: list[bool], mode: str) -> None:
    sub = _subset(sample, keep)
    outcome = sub.parse()
    assume(outcome.parse_error is None and outcome.parsed is not None)
    check_spans(sub, mode)


def test_non_ascii_offsets_are_utf8_bytes() -> None:
    text = " M \"ä b.txt\"\n?? 日本.txt\n"
    s = Sample("unicode", "git", ("status", "--porcelain"), text)
    outcome = s.parse()
    ev = locate(text, outcome.parsed, "entries", "git-status", "fields")
    span = spans_of(ev, ["entries", "1", "path"])
    assert span is not None and text.encode()[span.start:span.end].decode() == "日本.txt"
    assert span.start == len(" M \"ä b.txt\"\n?? ".encode())
