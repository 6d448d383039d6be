"""Redactor: every corpus family is masked, the rest of the text is not, and the API's edges."""

from __future__ import annotations

import json

import pytest

from parism.output.redact import Redactor, validate_output_patterns
from parism.output.redact.patterns import DEFAULT_PATTERNS, TRUNCATED_TAIL_PATTERNS
from tests.unit.redact.leak_corpus import (
    DOTENV,
    GH_CLASSIC,
    KUBE_SECRET_JSON,
    KUBE_SECRET_YAML,
    LEAKS,
    LINE_LEAKS,
    STRIPE_SECRET,
    leaked_pieces,
)

KUBE_LEAKS = [leak for leak in LEAKS if leak not in LINE_LEAKS]


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return Redactor()


def test_corpus_is_big_enough() -> None:
    assert len(LEAKS) >= 40
    assert len({leak.secret for leak in LEAKS}) == len(LEAKS)


@pytest.mark.parametrize("pattern", DEFAULT_PATTERNS + TRUNCATED_TAIL_PATTERNS, ids=lambda p: p.name)
def test_every_builtin_rule_runs_on_re2(pattern) -> None:  # type: ignore[no-untyped-def]
    report = Redactor([pattern.regex], mode="replace").report()
    assert report.used == "re2" and report.fallbacks == []


@pytest.mark.parametrize("leak", LINE_LEAKS, ids=lambda leak: leak.family)
def test_each_family_is_masked_in_its_context(redactor: Redactor, leak) -> None:  # type: ignore[no-untyped-def]
    masked = redactor.mask(leak.text)
    assert masked.count >= 1
    assert "[REDACTED]" in masked.text
    assert leaked_pieces([masked.text], [leak]) == []


def test_whole_dotenv_file(redactor: Redactor) -> None:
    masked = redactor.mask(DOTENV)
    assert leaked_pieces([masked.text], LINE_LEAKS) == []
    # context stays readable: keys, armour lines and URL hosts are kept
    assert "DB_PASSWORD=[REDACTED]" in masked.text
    assert "-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----" in masked.text
    assert "@db.internal:5432/app" in masked.text
    assert "  username = __token__\n" in masked.text


def test_kubernetes_secret_json_stays_valid_json(redactor: Redactor) -> None:
    masked = redactor.mask(KUBE_SECRET_JSON)
    assert leaked_pieces([masked.text], KUBE_LEAKS) == []
    doc = json.loads(masked.text)
    assert doc["data"] == {"password": "[REDACTED]", "dsn": "[REDACTED]"}
    inner = json.loads(doc["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert inner["data"] == {"password": "[REDACTED]", "dsn": "[REDACTED]"}
    assert doc["metadata"]["name"] == "app-db"


def test_kubernetes_secret_yaml(redactor: Redactor) -> None:
    masked = redactor.mask(KUBE_SECRET_YAML)
    assert leaked_pieces([masked.text], KUBE_LEAKS) == []
    assert "  username: [REDACTED]\n" in masked.text
    assert "kind: Secret\nmetadata:\n  name: app-db\n" in masked.text


def test_configmap_data_is_not_masked() -> None:
    # a fresh redactor: the shared one remembers these values from the Secret tests above
    text = KUBE_SECRET_YAML.replace("kind: Secret", "kind: ConfigMap")
    masked = Redactor().mask(text)
    assert "  dsn: " in masked.text and "[REDACTED]" not in masked.text.split("stringData")[0]


def test_ordinary_text_is_untouched(redactor: Redactor) -> None:
    text = (
        "PWD=/work/main\nmax_tokens: 2000\nsecret: false\nContext: system_u:object_r:passwd_exec_t:s0\n"
        "disk-usage-report-for-the-team-members\nhttps://example.com/path?x=1\n"
    )
    masked = redactor.mask(text)
    assert masked.text == text and masked.count == 0


def test_marker_is_configurable_and_masks_are_counted() -> None:
    masked = Redactor(marker="***").mask(f"a={GH_CLASSIC} b={STRIPE_SECRET}")
    assert masked.text == "a=*** b=***"
    assert masked.count == 2


def test_already_masked_text_is_not_masked_again(redactor: Redactor) -> None:
    once = redactor.mask(DOTENV)
    twice = redactor.mask(once.text)
    assert twice.text == once.text and twice.count == 0


def test_user_patterns_extend_the_defaults() -> None:
    r = Redactor([r"ACME-[0-9]{6}", r"internal id (?P<secret>\w+)"])
    masked = r.mask(f"ACME-123456 {GH_CLASSIC} internal id zq81")
    assert masked.text == "[REDACTED] [REDACTED] internal id [REDACTED]"


def test_replace_mode_uses_only_user_patterns() -> None:
    r = Redactor([r"ACME-[0-9]{6}"], mode="replace")
    assert r.mask(f"ACME-123456 {GH_CLASSIC}").text == f"[REDACTED] {GH_CLASSIC}"
    assert Redactor([], mode="replace").report().used == "none"
    assert Redactor([], mode="replace").mask(DOTENV).text == DOTENV


def test_disabled_redactor_passes_everything() -> None:
    r = Redactor(enabled=False)
    assert r.mask(DOTENV).text == DOTENV
    assert r.mask_args([f"--token={GH_CLASSIC}"]) == [f"--token={GH_CLASSIC}"]


def test_invalid_pattern_is_a_config_problem_and_fails_closed() -> None:
    assert validate_output_patterns([r"ok-\d+", r"(unclosed"]) == [
        validate_output_patterns([r"(unclosed"])[0].replace("[0]", "[1]")
    ]
    problems = validate_output_patterns([r"(unclosed"])
    assert len(problems) == 1 and "output_patterns[0]" in problems[0] and "(unclosed" in problems[0]
    r = Redactor([r"(unclosed"])
    assert r.problems() == problems
    masked = r.mask(DOTENV)
    assert masked.text == "" and masked.withheld_reason and "(unclosed" in masked.withheld_reason
    assert validate_output_patterns(None) == []


def test_kubernetes_secret_list_yaml(redactor: Redactor) -> None:
    """`kubectl get secrets -o yaml`: a List whose items are Secrets, `data` first in an item."""
    text = (
        "apiVersion: v1\nitems:\n- data:\n    password: aHVudGVyMmh1bnRlcjI=\n  kind: Secret\n"
        "- apiVersion: v1\n  data:\n    token: c2VjcmV0LXRva2VuLXZhbHVl\n  kind: Secret\nkind: List\n"
    )
    masked = redactor.mask(text)
    assert "aHVudGVy" not in masked.text and "c2VjcmV0" not in masked.text
    assert "    password: [REDACTED]\n" in masked.text and "    token: [REDACTED]\n" in masked.text


def test_user_patterns_mask_every_match_even_short_ones() -> None:
    assert Redactor([r"\b[01]\b"], mode="replace").mask("flags 0 1 2").text == "flags [REDACTED] [REDACTED] 2"


def test_truncated_empty_assignment_gets_no_marker(redactor: Redactor) -> None:
    assert redactor.mask("export DB_PASSWORD=", truncated=True).text == "export DB_PASSWORD="


def test_short_argument_values_are_not_searched_in_messages(redactor: Redactor) -> None:
    assert redactor.mask_text("a bad arg", args=["--pass", "a"]) == "a bad arg"


def test_service_account_json_stays_valid_json(redactor: Redactor) -> None:
    leak = next(leak for leak in LEAKS if leak.family == "gcp_service_account")
    doc = json.loads(redactor.mask(leak.text).text)
    assert doc == {"type": "service_account", "private_key": "[REDACTED]"}


def test_socket_paths_and_author_keys_are_not_secrets(redactor: Redactor) -> None:
    text = "SSH_AUTH_SOCK=/run/user/1000/ssh-agent.sock\nauthor = Ada\nAUTHOR_EMAIL=ada@example.com\n"
    assert redactor.mask(text).text == text
