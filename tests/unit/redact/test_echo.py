"""Echo: one call's echoes masked exactly as mask_args / mask_text did, with fewer RE2 passes."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parism.wire.envelope import Failure
from parism.output.redact import Redactor
from parism.output.redact import argv as argv_module
from parism.output.redact import redactor as redactor_module
from parism.output.redact.kube import KIND_SECRET_SOURCE
from parism.output.redact.patterns import DEFAULT_PATTERNS
from tests.unit.redact.leak_corpus import (
    DB_URL_PASSWORD,
    GH_CLASSIC,
    LEAKS,
    OPENSSH_BODY,
)
from tests.unit.redact.test_engine import GATE_TEXTS

MARK = "[REDACTED]"
CLEAN = ["-la", "/usr/bin", "ls", "/tmp/project", "--oneline", "log", "50", "a b", "x=1", "", "☃"]
SECRET_ARGS = [f"--token={GH_CLASSIC}", "--password", "hunter2hunter2", "-u", "ada:s3cr3tpw",
               f"https://ada:{DB_URL_PASSWORD}@db.example.com/x", "-pMyPassw0rd", "--no-password", "-p", "ab"]


def _reference_args(r: Redactor, args: list[str], cmd: str | None) -> list[str]:
    """mask_args as it was written before Echo (one argv reading and one mask per string)."""
    if not r.enabled:
        return list(args)
    out = list(args)
    for s in reversed(argv_module.argv_secrets(args, cmd)):
        out[s.index] = out[s.index][: s.start] + MARK + out[s.index][s.end :]
    return [_reference_mask(r, a) for a in out]


def _reference_text(r: Redactor, text: str, args: list[str], cmd: str | None) -> str:
    if not r.enabled or not text:
        return text
    for s in argv_module.argv_secrets(args, cmd):
        value = args[s.index][s.start : s.end]
        if len(value) >= 3:
            text = text.replace(value, MARK)
    return _reference_mask(r, text)


def _reference_mask(r: Redactor, text: str) -> str:
    masked = r.mask(text)
    return MARK if masked.withheld_reason is not None else masked.text


REDACTORS = [Redactor(), Redactor([r"s3cr3t\w*"]), Redactor([r"zz"], mode="replace"), Redactor(["("]),
             Redactor(enabled=False)]
ARGV = st.lists(st.sampled_from(CLEAN + SECRET_ARGS + [leak.text for leak in LEAKS[:12]]), max_size=6)


@settings(max_examples=150, deadline=None)
@given(which=st.integers(0, len(REDACTORS) - 1), args=ARGV, cmd=st.sampled_from(["ls", "mysql", "curl", None]),
       texts=st.lists(st.sampled_from(CLEAN + SECRET_ARGS + GATE_TEXTS[:20]), max_size=4))
def test_echo_gives_what_each_string_masked_alone_gives(which: int, args: list[str], cmd: str | None,
                                                        texts: list[str]) -> None:
    r = REDACTORS[which]
    echo = r.echo(args, cmd, expected=texts)
    assert [echo.text(t) for t in texts] == [_reference_text(r, t, args, cmd) for t in texts]
    assert echo.args() == _reference_args(r, args, cmd)
    assert r.mask_args(args, cmd=cmd) == _reference_args(r, args, cmd)
    failure = Failure(kind="guard", reason="arg_not_allowed", message=" ".join(args) or "m",
                      hint=(texts or [None])[0])
    expected_hint = _reference_text(r, failure.hint, args, cmd) if failure.hint else None
    assert echo.failure(failure) == failure.model_copy(update={
        "message": _reference_text(r, failure.message, args, cmd), "hint": expected_hint})


def test_an_echo_masks_each_string_once(monkeypatch: pytest.MonkeyPatch) -> None:
    r = Redactor()
    echo = r.echo(["-la", "/usr/bin"], "ls", expected=["ls", "/tmp/project"])
    calls: list[str] = []
    monkeypatch.setattr(r, "mask", lambda text, **_: calls.append(text))  # cleared: never called
    assert echo.args() == ["-la", "/usr/bin"] and echo.text("/tmp/project") == "/tmp/project"
    assert calls == []


@pytest.mark.parametrize("text", [t for t in GATE_TEXTS + [OPENSSH_BODY] if redactor_module._GATE.select(t)],
                         ids=range(len([t for t in GATE_TEXTS + [OPENSSH_BODY] if redactor_module._GATE.select(t)])))
def test_one_pass_over_joined_texts_sees_a_secret_in_any_of_them(text: str) -> None:
    r = Redactor()
    for before, after in ((["-la"], ["/tmp"]), ([], []), (["x=1", "ab"], [])):
        assert not r.none_can_match([*before, text, *after])
    assert r.none_can_match(CLEAN)


def test_no_gate_source_anchors_to_the_whole_text() -> None:
    """What makes the joined pass sound: ^ and $ only in multi-line mode, no \\A."""
    for source in [p.gate_source for p in DEFAULT_PATTERNS] + [KIND_SECRET_SOURCE]:
        outside_classes = re.sub(r"\[(?:\\.|[^\]\\])*\]", "", source)
        assert "\\A" not in outside_classes, source
        if "^" in outside_classes or "$" in outside_classes:
            assert re.match(r"\(\?[a-z]*m[a-z]*\)", source), source


def test_user_patterns_are_never_cleared_in_one_pass() -> None:
    assert not Redactor([r"ls"]).none_can_match(["-la", "ls"])
    assert not Redactor(["("]).none_can_match(["-la", "ls"])  # invalid: every text is withheld


NAME = st.lists(st.sampled_from(["-", "--", "no-", "_", "a", "X1", "api", "Key", "KEY", "\u212a", "ey",
                                 "pa", "ſ", "s", "S", "token", "TOKEN", "secret", "auth", "credential",
                                 "pass", "phrase", "wd", "word", "client", "private", "access", "="]),
                max_size=6).map("".join)


@settings(max_examples=400, deadline=None)
@given(flag=NAME)
def test_the_ending_precheck_never_hides_a_secret_flag(flag: str) -> None:
    name = flag.lstrip("-")
    by_regex = (flag.startswith("-") and bool(name) and not name.lower().startswith("no-")
                and argv_module._SECRET_FLAG.search(name) is not None)
    assert argv_module._is_secret_flag(flag) is by_regex


@pytest.mark.parametrize("flag", ["--token", "--X_TOKEN", "--secret", "--client-secret", "--password", "--db-password",
                                  "--passwd", "--pass", "--passphrase", "--api-key", "--apikey", "--ACCESS_KEY",
                                  "--private-key", "--auth", "--credential", "--credentials", "-token"])
def test_every_secret_ending_still_names_a_secret_flag(flag: str) -> None:
    assert argv_module._is_secret_flag(flag)


def test_folded_letters_still_name_a_secret_flag() -> None:
    assert argv_module._is_secret_flag("--api-\u212aEY")  # Kelvin sign: RE2 (?i) folds it to k
    assert argv_module._is_secret_flag("--paſſword")
