"""RE2 first, a stoppable fallback, fail closed; and the masks for cut output and echoes."""

from __future__ import annotations

import time

import pytest

from parism.output.redact import Redactor
from parism.output.redact import redactor as redactor_module
from parism.output.redact.engine import Gate, compile_re2
from parism.output.redact.patterns import DEFAULT_PATTERNS
from tests.unit.redact.leak_corpus import (
    ANTHROPIC,
    DB_URL_PASSWORD,
    DOTENV,
    ENV_PASSWORD,
    GH_CLASSIC,
    KUBE_SECRET_JSON,
    KUBE_SECRET_YAML,
    LEAKS,
    OPENSSH_BODY,
    Leak,
    leaked_pieces,
)

ONE_MB_LINE = "a" * (1 << 20) + "!"
# Nested quantifiers: exponential on a backtracking engine, linear on RE2.
CATASTROPHIC = r"(a+)+$"
# A backreference: RE2 refuses it; on a backtracking engine this input takes exponential time.
BACKREF = r"(?m)^(a|aa)+\1$"


def test_catastrophic_pattern_runs_on_re2_in_linear_time() -> None:
    r = Redactor([CATASTROPHIC, r"(x+x+)+y"])
    report = r.report()
    assert report.used == "re2" and report.fallbacks == []
    start = time.monotonic()
    masked = r.mask(ONE_MB_LINE + "\n" + "x" * (1 << 20))
    assert time.monotonic() - start < 5.0
    assert masked.withheld_reason is None and masked.fallback_ran is False


def test_backreference_falls_back_and_is_reported() -> None:
    r = Redactor([r"(['\"])sekrit-\w+\1"])
    report = r.report()
    assert report.used == "re2"
    assert [f.pattern for f in report.fallbacks] == [r"(['\"])sekrit-\w+\1"]
    assert "RE2" in report.fallbacks[0].reason
    masked = r.mask("value 'sekrit-42' here")
    assert masked.text == "value [REDACTED] here" and masked.fallback_ran


def test_fallback_is_stopped_by_its_time_limit_and_fails_closed() -> None:
    r = Redactor([BACKREF], fallback_time_limit_s=0.2)
    assert [f.pattern for f in r.report().fallbacks] == [BACKREF]
    text = f"token={GH_CLASSIC}\n" + "a" * 5000 + "b"
    start = time.monotonic()
    masked = r.mask(text)
    elapsed = time.monotonic() - start
    assert elapsed < 2.0
    assert masked.text == ""
    assert masked.withheld_reason is not None and BACKREF in masked.withheld_reason
    assert "withheld" in masked.withheld_reason and masked.fallback_ran


def test_echo_of_a_withheld_text_is_the_marker() -> None:
    r = Redactor([BACKREF], fallback_time_limit_s=0.05)
    assert r.mask_args(["a" * 5000 + "b", "ok"]) == ["[REDACTED]", "ok"]


@pytest.mark.parametrize("cut", [6, 12, 30])
def test_token_cut_by_the_cap_is_masked(cut: int) -> None:
    text = "build ok\nexport KEY=" + ANTHROPIC[:cut]
    masked = Redactor().mask(text, truncated=True)
    assert masked.text == "build ok\nexport KEY=[REDACTED]"
    # without the truncation flag a short prefix is not a secret shape (no false positives)
    if cut < 20:
        assert Redactor().mask(text).text == text


def test_assignment_and_url_cut_by_the_cap_are_masked() -> None:
    r = Redactor()
    assert r.mask("DB_PASSWORD=" + ENV_PASSWORD[:5], truncated=True).text == "DB_PASSWORD=[REDACTED]"
    cut_url = "postgres://app:" + DB_URL_PASSWORD[:9]
    assert r.mask(cut_url, truncated=True).text == "postgres://app:[REDACTED]"


def test_private_key_cut_before_its_end_line_is_masked() -> None:
    text = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + OPENSSH_BODY[: len(OPENSSH_BODY) // 2]
    masked = Redactor().mask(text, truncated=True)
    assert leaked_pieces([masked.text], [Leak("pem", OPENSSH_BODY, text)]) == []


def test_mask_args_hides_flag_values_and_token_shapes() -> None:
    r = Redactor()
    args = [
        f"--token={GH_CLASSIC}", "--password", "hunter2hunter2", "-u", "bob:pw-123456",
        "--author=Ada", "--no-auth", "-v", "https://app:" + DB_URL_PASSWORD + "@db/x", GH_CLASSIC,
    ]
    assert r.mask_args(args) == [
        "--token=[REDACTED]", "--password", "[REDACTED]", "-u", "bob:[REDACTED]",
        "--author=Ada", "--no-auth", "-v", "https://app:[REDACTED]@db/x", "[REDACTED]",
    ]


def test_mask_args_attached_password_only_for_clients_that_use_it() -> None:
    r = Redactor()
    assert r.mask_args(["-uroot", "-pS3cretPass"], cmd="mysql") == ["-uroot", "-p[REDACTED]"]
    assert r.mask_args(["log", "-p"], cmd="git") == ["log", "-p"]
    assert r.mask_args(["-pS3cretPass"], cmd="ls") == ["-pS3cretPass"]


def test_mask_text_removes_argument_values_quoted_in_messages() -> None:
    r = Redactor()
    args = ["--password", "hunter2hunter2", "--api-key=plainvalue99"]
    message = "flag --password hunter2hunter2 is not allowed (also saw --api-key=plainvalue99)"
    masked = r.mask_text(message, args=args)
    assert "hunter2" not in masked and "plainvalue99" not in masked
    assert masked.startswith("flag --password [REDACTED] is not allowed")
    assert r.mask_text(f"bad arg {GH_CLASSIC}") == "bad arg [REDACTED]"


def test_fallback_budget_covers_many_slow_matches() -> None:
    """Each match alone is quick, together they exceed the budget: still withheld."""
    r = Redactor([r"(?m)^(a|aa)+\1x"], mode="replace", fallback_time_limit_s=0.1)
    text = ("a" * 18 + "b\n") * 20000
    start = time.monotonic()
    masked = r.mask(text)
    assert time.monotonic() - start < 3.0
    assert masked.withheld_reason is not None and masked.text == ""


GATE_TEXTS = [leak.text for leak in LEAKS] + [
    DOTENV, KUBE_SECRET_JSON, KUBE_SECRET_YAML, f"cut here: token={GH_CLASSIC[:12]}", "kind: Secret\n",
    # shapes the leak corpus does not carry
    "xapp-1-A1B2C3D4E5F6G7", "whsec_" + "a1B2" * 6, "GOCSPX-" + "x9Y8" * 6, "dop_v1_" + "0f" * 32,
    "SG." + "a" * 20 + "." + "b" * 30,
    # url_credentials at the ends of its bounds (the gate source has none)
    "a" + "b+.-" * 7 + "cd://" + "u" * 256 + ":pw@host", "s3://k:" + "p" * 300 + "@bucket",
]


class _SelectsAll:
    """A gate that runs every built-in rule: the reference the real gate must agree with."""

    def select(self, text: str) -> frozenset[int]:
        return frozenset(range(len(DEFAULT_PATTERNS) + 1))


@pytest.mark.parametrize("text", GATE_TEXTS, ids=range(len(GATE_TEXTS)))
def test_gate_finds_what_every_rule_finds(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the rules the gate selects run: the hits must be exactly those of running them all."""
    assert redactor_module._GATE.complete  # else clean text pays one pass per rule
    gated = [Redactor().find(text, truncated=t) for t in (False, True)]
    monkeypatch.setattr(redactor_module, "_GATE", _SelectsAll())
    assert [Redactor().find(text, truncated=t) for t in (False, True)] == gated


@pytest.mark.parametrize(("index", "pattern"), list(enumerate(DEFAULT_PATTERNS)), ids=lambda p: getattr(p, "name", ""))
def test_gate_selects_a_builtin_rule_wherever_it_matches(index: int, pattern) -> None:  # type: ignore[no-untyped-def]
    alone = Redactor([pattern.regex], mode="replace")
    texts = [t for t in GATE_TEXTS if alone.find(t).hits]
    assert texts, f"no corpus text exercises {pattern.name}"
    assert all(index in redactor_module._GATE.select(t) for t in texts)
    assert redactor_module._GATE.select("total 0\ndrwxr-xr-x 2 ada ada 4096 Jan  1 00:00 .\n") == frozenset()


@pytest.mark.parametrize("pattern", [p for p in DEFAULT_PATTERNS if p.gate], ids=lambda p: p.name)
def test_a_gate_source_matches_inside_every_match_of_its_rule(pattern) -> None:  # type: ignore[no-untyped-def]
    """A wider gate source is safe only if it matches wherever the rule does."""
    rule, gate = compile_re2(pattern.regex), compile_re2(pattern.gate)
    matches = [m.group(0) for t in GATE_TEXTS for m in rule.finditer(t)]
    assert len(matches) >= 3, f"too few corpus texts exercise {pattern.name}"
    assert all(gate.search(m) for m in matches)


def test_gate_selects_every_source_when_the_set_gives_up() -> None:
    """A Set whose DFA runs out of memory answers "no match": after the alternation matched,
    that cannot be true, so every rule runs."""
    class GaveUp:
        def Match(self, text: str) -> None:  # noqa: N802 — re2.Set's method name
            return None

    gate = Gate(["abc", "xyz", "(?i)hello"])
    assert gate.select("say HELLO") == frozenset({2})
    gate._set = GaveUp()  # type: ignore[assignment]
    assert gate.select("say HELLO") == frozenset({0, 1, 2})
    assert gate.select("nothing here") == frozenset()
