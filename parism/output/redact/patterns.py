"""Default secret shapes, one entry per family (RE2 syntax).

Why these rules look the way they do:
- every default must compile on RE2, so matching time is linear in the output length whatever
  the agent makes a command print (a unit test compiles each one);
- a pattern that contains named groups ``secret``, ``secret2`` … masks only those groups, so
  context words stay readable (``password=[REDACTED]``, ``"SecretAccessKey": "[REDACTED]"``)
  and JSON stays valid JSON (quotes are outside the group); a pattern without such a group
  masks its whole match;
- prefixes are anchored with ``\\b`` so that ordinary words (``disk-usage``) never start a hit;
- assignment rules accept the key in any case and with any prefix/suffix (``AWS_SECRET_ACCESS_KEY``,
  ``db_password``, ``"clientSecret"``), because that is how configuration files, ``env`` and
  JSON APIs spell them.

Nothing here can recognise a secret that has no shape (a bare random word): docs/security.md
says so.
"""

from __future__ import annotations

from dataclasses import dataclass

# Values that an assignment rule matches but that are never secrets; masking them would only
# damage the output (`"secret": false`, `token: null`).
HARMLESS_VALUES: frozenset[str] = frozenset(
    {"", "true", "false", "null", "none", "nil", "yes", "no", "on", "off", "0", "1"}
)


@dataclass(frozen=True)
class PatternSpec:
    """A named redaction rule; ``name`` is what fixture redaction logs and tests refer to.

    ``ignore``: matched values (compared lower-cased) that are never masked by this rule.
    ``gate``: a wider RE2 source for the redactor's one-pass gate only (it must match wherever
    ``regex`` matches). Why: a bounded repetition that can start at every word (the URL scheme
    ``{0,30}``) multiplies the gate's DFA states and doubled the cost of a clean 74 KB text;
    the rule itself still runs with ``regex`` once the gate selects it.
    """

    name: str
    regex: str
    ignore: frozenset[str] = frozenset()
    gate: str | None = None

    @property
    def gate_source(self) -> str:
        return self.gate or self.regex


# Characters a token may contain once its prefix is known (the URL-safe base64 alphabet).
_TOKEN = r"[A-Za-z0-9_\-]"
# Words that make a key look secret in `key = value` / `"key": "value"` assignments, followed by
# the rest of the key (`_ACCESS_KEY`, `.value`; not `s` as in `tokens`). `auth` alone must end
# the key (`"auth":` in Docker's config, npm's `_auth=`), so `SSH_AUTH_SOCK` is not a secret.
_SECRET_KEYS = (
    r"(?:(?:password|passwd|passphrase|secret|token|api[_\-]?key|apikey|access[_\-]?key"
    r"|account[_\-]?key|private[_\-]?key|client[_\-]?secret)(?:[_.\-][A-Za-z0-9_.\-]{0,40})?"
    r"|\bauth|_auth)"
)
# The separator: `=`, a quoted key's `:`, or a bare key's `: ` (a bare `key:value` is an SELinux
# label, not YAML).
_KEY_TAIL = r"(?:[\"'][ \t]*[:=][ \t]*|[ \t]*=[ \t]*|[ \t]*:[ \t]+)"
# The value of an assignment: a double-quoted, single-quoted or bare run of characters.
_VALUE = (
    r"(?:\"(?P<secret>[^\"\n]+)\"|'(?P<secret2>[^'\n]+)'"
    r"|(?P<secret3>[^\s\"',;&]+))"
)

DEFAULT_PATTERNS: tuple[PatternSpec, ...] = (
    # GitHub classic personal, OAuth, user-to-server, server-to-server (app) and refresh tokens.
    PatternSpec("github_token", r"\bgh[pousr]_[A-Za-z0-9]{20,}\b"),
    # GitHub fine-grained personal access tokens.
    PatternSpec("github_fine_grained_token", r"\bgithub_pat_[A-Za-z0-9_]{20,}\b"),
    # GitLab personal/project/group, deploy, runner, trigger, feed, OAuth and agent tokens.
    PatternSpec(
        "gitlab_token",
        r"\bgl(?:pat|dt|rt|ptt|cbt|ft|imt|oas|soat|agent)-" + _TOKEN + r"{20,}",
    ),
    # AWS access key ids (long-term AKIA, temporary ASIA and the other documented prefixes).
    PatternSpec(
        "aws_access_key_id",
        r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|AROA|ANPA|ANVA|APKA)[0-9A-Z]{16}\b",
    ),
    # AWS secret access keys and session tokens next to the words that name them.
    PatternSpec(
        "aws_secret_access_key",
        r"(?i)(?:secret_?access_?key|aws_?secret(?:_?key)?|session_?token)[\"']?\s*[:=]\s*"
        r"[\"']?(?P<secret>[A-Za-z0-9/+=]{40,})",
    ),
    # Slack bot, user, app-level, refresh and legacy tokens, and incoming-webhook URLs.
    PatternSpec("slack_token", r"\bxox[abposre]-[A-Za-z0-9\-]{10,}"),
    PatternSpec("slack_app_token", r"\bxapp-[0-9]-[A-Za-z0-9\-]{10,}"),
    PatternSpec(
        "slack_webhook",
        r"hooks\.slack\.com/services/(?P<secret>T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+)",
    ),
    # Stripe secret and restricted keys (live and test) and webhook signing secrets.
    PatternSpec("stripe_key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    PatternSpec("stripe_webhook_secret", r"\bwhsec_[A-Za-z0-9]{20,}"),
    # Anthropic API and admin keys (listed before the wider OpenAI shape for clearer logs).
    PatternSpec("anthropic_api_key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    # OpenAI user, project, service-account and admin keys.
    PatternSpec("openai_api_key", r"\bsk-[A-Za-z0-9_\-]{20,}"),
    # Google API keys and OAuth access tokens / client secrets.
    PatternSpec("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    PatternSpec("google_oauth_token", r"\bya29\.[0-9A-Za-z_\-]{20,}"),
    PatternSpec("google_client_secret", r"\bGOCSPX-[0-9A-Za-z_\-]{20,64}"),
    # npm automation/publish tokens and PyPI upload tokens (macaroons).
    PatternSpec("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    PatternSpec("pypi_token", r"\bpypi-[A-Za-z0-9_\-]{50,}"),
    # Hugging Face, Docker Hub, DigitalOcean and SendGrid tokens: common in agent workspaces.
    PatternSpec("huggingface_token", r"\bhf_[A-Za-z0-9]{30,64}\b"),
    PatternSpec("dockerhub_token", r"\bdckr_pat_[A-Za-z0-9_\-]{20,128}"),
    PatternSpec("digitalocean_token", r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
    PatternSpec("sendgrid_key", r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}"),
    # PEM private keys (PKCS#1/#8, EC, OpenSSH, encrypted, PGP): the body is masked, the armour
    # lines stay; a block whose END line is missing (cut output) is masked to the end of text.
    PatternSpec(
        "private_key_block",
        r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----(?P<secret>[\s\S]*?)"
        r"(?:-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----|\z)",
    ),
    # JSON Web Tokens: three base64url segments, the first one a JSON object (`{"` → `eyJ`).
    PatternSpec(
        "jwt",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
    ),
    # Credentials inside URLs: the password part of scheme://user:password@host.
    PatternSpec(
        "url_credentials",
        r"\b[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s/:@\"']{1,256}:(?P<secret>[^\s/@\"']+)@",
        gate=r"://[^\s/:@\"']+:[^\s/@\"']+@",
    ),
    # HTTP Authorization headers: bearer tokens and basic credentials.
    PatternSpec("bearer_token", r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/=\-]{8,})"),
    PatternSpec(
        "basic_auth_header",
        r"(?i)\bauthorization\"?\s*[:=]\s*\"?basic\s+(?P<secret>[A-Za-z0-9+/=]{8,})",
    ),
    # Base64-encoded private keys in kubeconfig files (`client-key-data: …`).
    PatternSpec(
        "kubeconfig_key_data",
        r"(?i)\b(?:client|private)-key-data[\"']?\s*:\s*[\"']?(?P<secret>[A-Za-z0-9+/=]{16,})",
    ),
    # .netrc / _netrc: `machine … login … password …`, on one line or one token per line.
    PatternSpec("netrc_password", r"(?i)\blogin\s+\S+\s+password\s+(?P<secret>\S+)"),
    # The line form may carry a `grep` (`file:12:`) or diff (`+`) prefix.
    PatternSpec(
        "netrc_password_line",
        r"(?im)^(?:[^\s:]+:(?:[0-9]+:)?|[+\- ])?[ \t]*password[ \t]+(?P<secret>\S+)[ \t]*$",
    ),
    # password=, secret: , "api_key": "…", "auth": "…" (Docker config), AccountKey=… (Azure),
    # AWS_SECRET_ACCESS_KEY=… and the like.
    PatternSpec(
        "secret_assignment",
        r"(?i)" + _SECRET_KEYS + _KEY_TAIL + _VALUE,
        HARMLESS_VALUES,
    ),
)

# Applied only when the output was cut by the byte cap: the cut may leave the first part of a
# secret, shorter than its full shape, at the very end of the text. Each rule matches a known
# secret beginning running up to the end of the text (`\z`), and the whole tail is masked.
TRUNCATED_TAIL_PATTERNS: tuple[PatternSpec, ...] = (
    PatternSpec(
        "truncated_token_prefix",
        r"\b(?:gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt|cbt|ft|imt|oas|soat|agent)-"
        r"|(?:AKIA|ASIA)[0-9A-Z]|xox[abposre]-|xapp-|(?:sk|rk)_(?:live|test)_|whsec_|sk-"
        r"|AIza|ya29\.|GOCSPX-|npm_|pypi-|hf_|dckr_pat_|do[opr]_v1_|SG\.|eyJ)"
        r"[A-Za-z0-9_\-.+/=]*\z",
    ),
    PatternSpec(
        "truncated_assignment",
        r"(?i)" + _SECRET_KEYS + _KEY_TAIL + r"[\"']?"
        r"(?P<secret>[^\s\"']*)\z",
        HARMLESS_VALUES,
    ),
    PatternSpec(
        "truncated_url_credentials",
        r"://[^\s/:@\"']{1,256}:(?P<secret>[^\s/@\"']*)\z",
    ),
    PatternSpec("truncated_bearer", r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/=\-]*)\z"),
)
