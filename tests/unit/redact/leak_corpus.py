"""A corpus of realistic secrets, each in the context a command would print it.

Shapes follow the vendors' published formats (prefix, alphabet, length); the random parts come
from a seeded generator, so the corpus is the same on every run and none of the values is live.
``Leak.secret`` is exactly the part that must never come out; ``Leak.text`` is a file or output
line that contains it. ``pieces`` gives every 8-character window of a secret, the unit of the
"no fragment leaks" check.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

_RNG = random.Random(20261130)
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
UPPER_NUM = string.ascii_uppercase + "234567"
HEX = "0123456789abcdef"


def rand(alphabet: str, n: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass(frozen=True)
class Leak:
    family: str
    secret: str
    text: str  # how the secret appears in a file / output (contains ``secret``)


def pieces(secret: str, width: int = 8) -> Iterator[str]:
    """Every ``width``-character window of ``secret`` that is not just whitespace or armour."""
    for i in range(max(1, len(secret) - width + 1)):
        piece = secret[i : i + width]
        if piece.strip() and "\n" not in piece:
            yield piece


def leaked_pieces(haystacks: Iterable[str], leaks: Iterable[Leak]) -> list[tuple[str, str]]:
    """``(family, piece)`` for every fragment of a secret found in any of ``haystacks``."""
    texts = list(haystacks)
    found: list[tuple[str, str]] = []
    for leak in leaks:
        for piece in pieces(leak.secret):
            if any(piece in t for t in texts):
                found.append((leak.family, piece))
                break
    return found


def _jwt() -> str:
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64url(json.dumps({"sub": rand(string.digits, 10), "name": "Ada", "iat": 1730000000}).encode())
    return f"{header}.{payload}.{rand(B64URL, 43)}"


def _pem_body(lines: int) -> str:
    return "\n".join(rand(B64, 64) for _ in range(lines)) + "\n" + rand(B64, 24) + "==\n"


def _kube_values() -> tuple[str, str]:
    return (
        base64.b64encode(rand(ALNUM, 18).encode()).decode(),
        base64.b64encode(("postgres://app:" + rand(ALNUM, 14) + "@db:5432/app").encode()).decode(),
    )


GH_CLASSIC = "ghp_" + rand(ALNUM, 36)
GH_OAUTH = "gho_" + rand(ALNUM, 36)
GH_APP_SERVER = "ghs_" + rand(ALNUM, 36)
GH_APP_USER = "ghu_" + rand(ALNUM, 36)
GH_REFRESH = "ghr_" + rand(ALNUM, 76)
GH_FINE = "github_pat_" + rand(ALNUM, 22) + "_" + rand(ALNUM, 59)
GITLAB_PAT = "glpat-" + rand(B64URL, 20)
GITLAB_RUNNER = "glrt-" + rand(B64URL, 20)
AWS_KEY_ID = "AKIA" + rand(UPPER_NUM, 16)
AWS_TEMP_KEY_ID = "ASIA" + rand(UPPER_NUM, 16)
AWS_SECRET = rand(B64, 40)
AWS_SECRET_JSON = rand(B64, 40)
AWS_SESSION = rand(B64, 356)
SLACK_BOT = f"xoxb-{rand(string.digits, 12)}-{rand(string.digits, 13)}-{rand(ALNUM, 24)}"
SLACK_USER = f"xoxp-{rand(string.digits, 12)}-{rand(string.digits, 12)}-{rand(string.digits, 13)}-{rand(HEX, 32)}"
SLACK_HOOK = f"T{rand(UPPER_NUM, 8)}/B{rand(UPPER_NUM, 10)}/{rand(ALNUM, 24)}"
STRIPE_SECRET = "sk_live_" + rand(ALNUM, 99)
STRIPE_RESTRICTED = "rk_live_" + rand(ALNUM, 99)
OPENAI_PROJECT = "sk-proj-" + rand(B64URL, 156)
OPENAI_LEGACY = "sk-" + rand(ALNUM, 48)
ANTHROPIC = "sk-ant-api03-" + rand(B64URL, 93) + "AA"
GOOGLE_API = "AIza" + rand(B64URL, 35)
GOOGLE_OAUTH = "ya29." + rand(B64URL, 150)
NPM = "npm_" + rand(ALNUM, 36)
PYPI = "pypi-AgEIcHlwaS5vcmc" + rand(B64URL, 160)
HUGGINGFACE = "hf_" + rand(string.ascii_letters, 34)
DOCKERHUB = "dckr_pat_" + rand(B64URL, 27)
RSA_BODY = _pem_body(25)
OPENSSH_BODY = _pem_body(6)
JWT = _jwt()
DB_URL_PASSWORD = rand(ALNUM, 20)
GIT_URL_TOKEN = GH_CLASSIC[:4] + rand(ALNUM, 36)
ENV_PASSWORD = rand(ALNUM + "!#%", 22)
YAML_SECRET = rand(ALNUM, 32)
JSON_API_KEY = rand(HEX, 40)
QUOTED_PASSWORD = "correct horse " + rand(ALNUM, 12)
BEARER = rand(B64URL, 48)
BASIC = base64.b64encode(f"deploy:{rand(ALNUM, 16)}".encode()).decode()
KUBE_JSON_A, KUBE_JSON_B = _kube_values()
KUBE_YAML_A, KUBE_YAML_B = _kube_values()
KUBE_STRING_DATA = rand(ALNUM, 24)
DOCKER_AUTH = base64.b64encode(f"ada:{rand(ALNUM, 20)}".encode()).decode()
NPMRC_AUTH = base64.b64encode(f"ada:{rand(ALNUM, 20)}".encode()).decode()
NETRC_INLINE = rand(ALNUM, 24)
NETRC_LINE = rand(ALNUM + "!@#", 18)
KUBECONFIG_KEY = base64.b64encode(b"-----BEGIN EC PRIVATE KEY-----\n" + rand(B64, 96).encode()).decode()
AZURE_ACCOUNT_KEY = rand(B64, 86) + "=="
GCP_KEY_BODY = _pem_body(4)
MULTILINE_YAML_CERT_KEY = rand(B64, 64)

LEAKS: tuple[Leak, ...] = (
    Leak("github_classic", GH_CLASSIC, f"GITHUB_PAT_BACKUP={GH_CLASSIC}"),
    Leak("github_oauth", GH_OAUTH, f"    oauth_token: {GH_OAUTH}"),
    Leak("github_app_server", GH_APP_SERVER, f"installation token {GH_APP_SERVER} expires in 1h"),
    Leak("github_app_user", GH_APP_USER, f'{{"token_value": "{GH_APP_USER}"}}'),
    Leak("github_refresh", GH_REFRESH, f"refresh={GH_REFRESH}"),
    Leak("github_fine_grained", GH_FINE, f"export GH_FG={GH_FINE}"),
    Leak("gitlab_pat", GITLAB_PAT, f"gitlab: {GITLAB_PAT}"),
    Leak("gitlab_runner", GITLAB_RUNNER, f"  runner {GITLAB_RUNNER}"),
    Leak("aws_access_key_id", AWS_KEY_ID, f"aws_access_key_id = {AWS_KEY_ID}"),
    Leak("aws_temp_key_id", AWS_TEMP_KEY_ID, f'"AccessKeyId": "{AWS_TEMP_KEY_ID}",'),
    Leak("aws_secret_ini", AWS_SECRET, f"aws_secret_access_key = {AWS_SECRET}"),
    Leak("aws_secret_json", AWS_SECRET_JSON, f'"SecretAccessKey": "{AWS_SECRET_JSON}",'),
    Leak("aws_session_token", AWS_SESSION, f'"SessionToken": "{AWS_SESSION}",'),
    Leak("slack_bot", SLACK_BOT, f"SLACK_BOT={SLACK_BOT}"),
    Leak("slack_user", SLACK_USER, f"slack user {SLACK_USER}"),
    Leak("slack_webhook", SLACK_HOOK, f"hook=https://hooks.slack.com/services/{SLACK_HOOK}"),
    Leak("stripe_secret", STRIPE_SECRET, f"STRIPE_LIVE={STRIPE_SECRET}"),
    Leak("stripe_restricted", STRIPE_RESTRICTED, f"key {STRIPE_RESTRICTED}"),
    Leak("openai_project", OPENAI_PROJECT, f"OPENAI_KEY_BACKUP={OPENAI_PROJECT}"),
    Leak("openai_legacy", OPENAI_LEGACY, f"openai.api_key = '{OPENAI_LEGACY}'"),
    Leak("anthropic", ANTHROPIC, f"client = Anthropic(api_key=\"{ANTHROPIC}\")"),
    Leak("google_api_key", GOOGLE_API, f"https://maps.googleapis.com/maps/api/js?key={GOOGLE_API}"),
    Leak("google_oauth", GOOGLE_OAUTH, f"access {GOOGLE_OAUTH}"),
    Leak("npm", NPM, f"//registry.npmjs.org/:_authToken={NPM}"),
    Leak("pypi", PYPI, f"[pypi]\n  username = __token__\n  password = {PYPI}"),
    Leak("huggingface", HUGGINGFACE, f"HF_HUB={HUGGINGFACE}"),
    Leak("dockerhub", DOCKERHUB, f"docker login -u ada --password-stdin <<< {DOCKERHUB}"),
    Leak(
        "pem_rsa",
        RSA_BODY,
        f"-----BEGIN RSA PRIVATE KEY-----\n{RSA_BODY}-----END RSA PRIVATE KEY-----",
    ),
    Leak(
        "pem_openssh",
        OPENSSH_BODY,
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{OPENSSH_BODY}-----END OPENSSH PRIVATE KEY-----",
    ),
    Leak("jwt", JWT, f"Cookie: session={JWT}; Path=/"),
    Leak("url_credentials_db", DB_URL_PASSWORD, f"DATABASE_URL=postgres://app:{DB_URL_PASSWORD}@db.internal:5432/app"),
    Leak("url_credentials_git", GIT_URL_TOKEN, f"\turl = https://x-access-token:{GIT_URL_TOKEN}@github.com/acme/app.git"),
    Leak("env_password", ENV_PASSWORD, f"DB_PASSWORD={ENV_PASSWORD}"),
    Leak("yaml_secret", YAML_SECRET, f"  client_secret: {YAML_SECRET}"),
    Leak("json_api_key", JSON_API_KEY, f'  "api_key": "{JSON_API_KEY}",'),
    Leak("quoted_password", QUOTED_PASSWORD, f"SMTP_PASSWORD='{QUOTED_PASSWORD}'"),
    Leak("bearer_header", BEARER, f"> Authorization: Bearer {BEARER}"),
    Leak("basic_header", BASIC, f"> Authorization: Basic {BASIC}"),
    Leak("docker_config_auth", DOCKER_AUTH, f'    "https://index.docker.io/v1/": {{"auth": "{DOCKER_AUTH}"}}'),
    Leak("npmrc_auth", NPMRC_AUTH, f"//npm.internal.example/:_auth={NPMRC_AUTH}"),
    Leak("netrc_inline", NETRC_INLINE, f"machine api.heroku.com login ada@example.com password {NETRC_INLINE}"),
    Leak("netrc_line", NETRC_LINE, f"machine git.example.com\n  login ada\n  password {NETRC_LINE}"),
    Leak("kubeconfig_key_data", KUBECONFIG_KEY, f"    client-key-data: {KUBECONFIG_KEY}"),
    Leak(
        "azure_account_key",
        AZURE_ACCOUNT_KEY,
        f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={AZURE_ACCOUNT_KEY};EndpointSuffix=core.windows.net",
    ),
    Leak(
        "gcp_service_account",
        GCP_KEY_BODY,
        json.dumps({"type": "service_account", "private_key":
                    f"-----BEGIN PRIVATE KEY-----\n{GCP_KEY_BODY}-----END PRIVATE KEY-----\n"}),
    ),
    Leak("kube_json_data_a", KUBE_JSON_A, f'"password": "{KUBE_JSON_A}"'),
    Leak("kube_json_data_b", KUBE_JSON_B, f'"dsn": "{KUBE_JSON_B}"'),
    Leak("kube_yaml_data_a", KUBE_YAML_A, f"  username: {KUBE_YAML_A}"),
    Leak("kube_yaml_data_b", KUBE_YAML_B, f"  dsn: {KUBE_YAML_B}"),
    Leak("kube_string_data", KUBE_STRING_DATA, f"  token: {KUBE_STRING_DATA}"),
    Leak("kube_block_scalar", MULTILINE_YAML_CERT_KEY, f"    {MULTILINE_YAML_CERT_KEY}"),
)

KUBE_SECRET_JSON = json.dumps(
    {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "app-db",
            "namespace": "prod",
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": json.dumps(
                    {"apiVersion": "v1", "data": {"password": KUBE_JSON_A, "dsn": KUBE_JSON_B},
                     "kind": "Secret", "metadata": {"name": "app-db", "namespace": "prod"},
                     "type": "Opaque"}
                )
            },
        },
        "data": {"password": KUBE_JSON_A, "dsn": KUBE_JSON_B},
        "type": "Opaque",
    },
    indent=4,
)

KUBE_SECRET_YAML = f"""apiVersion: v1
data:
  username: {KUBE_YAML_A}
  dsn: {KUBE_YAML_B}
stringData:
  token: {KUBE_STRING_DATA}
  tls.key: |
    {MULTILINE_YAML_CERT_KEY}
kind: Secret
metadata:
  name: app-db
  namespace: prod
type: Opaque
"""

# Files and outputs that hold the corpus the way a workspace would.
KUBE_FAMILIES = frozenset(
    {"kube_json_data_a", "kube_json_data_b", "kube_yaml_data_a", "kube_yaml_data_b",
     "kube_string_data", "kube_block_scalar"}
)
LINE_LEAKS: tuple[Leak, ...] = tuple(l for l in LEAKS if l.family not in KUBE_FAMILIES)
DOTENV = "\n".join(l.text for l in LINE_LEAKS) + "\n"
