"""Real outputs of every parser that provides evidence: the project's fixtures, the shared jc
corpus (real captures; CI has it), the documented-format samples of the devops/systemd tests
(those tools cannot run here), and live runs of the binaries on this machine."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from parism.results.evidence import PROVIDERS
from parism.parsers import registry

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures"
CORPUS = ROOT.parent / "shared" / "corpus" / "jc"
#: the commands with a parser that gives evidence (``Parser.evidence``), from the registry
COMMANDS = tuple(cmd for cmd, top in registry.command_parsers() if any(p.evidence for p in registry.walk(top)))


@dataclass(frozen=True)
class Sample:
    label: str
    cmd: str
    args: tuple[str, ...]
    text: str
    os: str = "linux"
    now_year: int | None = None

    def parse(self) -> registry.ParseOutcome:
        return registry.parse(self.cmd, list(self.args), self.text, self.os, now_year=self.now_year)


def _fixture_samples() -> list[Sample]:
    out = []
    for spec_path in sorted(FIXTURES.glob("*/*/*.json")):
        cmd = spec_path.parent.name
        if cmd not in COMMANDS:
            continue
        spec = json.loads(spec_path.read_text(encoding="utf-8"))
        argv = spec.get("argv") or []
        if not argv:
            continue
        text = spec_path.with_suffix(".out").read_bytes().decode("utf-8", "replace")
        args = argv[1:] if argv[0] == cmd else argv
        out.append(Sample(f"fixture:{spec_path.parent.parent.name}/{cmd}/{spec_path.stem}", cmd, tuple(args), text,
                          spec.get("os", spec_path.parent.parent.name), spec.get("now_year")))
    return out


def _corpus_samples() -> list[Sample]:
    manifest = CORPUS / "manifest.json"
    if not manifest.exists():
        return []
    out = []
    for e in json.loads(manifest.read_text())["entries"]:
        argv = e.get("argv") or []
        if (e.get("os_family") != "linux" or e.get("argv_confidence") not in ("high", "medium")
                or not argv or argv[0] not in COMMANDS):
            continue
        text = (CORPUS / e["files"]["out"]).read_bytes().decode("utf-8", "replace")
        out.append(Sample(f"corpus:{e['files']['out']}", argv[0], tuple(argv[1:]), text))
    return out


def _documented_samples() -> list[Sample]:
    from tests.parsers.devops.test_devops import DOCKER_PS, PODS_ALL_NS, PODS_WIDE
    from tests.parsers.system.test_systemctl_journalctl import LIST_UNITS

    helm = ("NAME   \tNAMESPACE\tREVISION\tUPDATED                                \tSTATUS  \tCHART       \tAPP VERSION\n"
            "myapp  \tdefault  \t3       \t2026-11-01 10:00:00.123 +0000 UTC\tdeployed\tmyapp-1.2.0 \t\n"
            "redis  \tcache    \t1       \t2026-10-01 09:00:00.000 +0000 UTC\tfailed  \tredis-18.1.0\t7.2.3\n")
    return [
        Sample("doc:kubectl-pods-A", "kubectl", ("get", "pods", "-A"), PODS_ALL_NS),
        Sample("doc:kubectl-pods-wide", "kubectl", ("get", "pods", "-o", "wide"), PODS_WIDE),
        Sample("doc:docker-ps-a", "docker", ("ps", "-a"), DOCKER_PS),
        Sample("doc:helm-list-A", "helm", ("list", "-A"), helm),
        Sample("doc:systemctl-list-units", "systemctl", ("list-units", "--all"), LIST_UNITS),
    ]


def git_repo(path: Path) -> Path:
    """A small real repository: two commits, a modified, an untracked and a renamed-in-index file."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", "user.name=Ada Lovelace", "-c", "user.email=ada@example.org", *args],
                              cwd=path, env=env, check=True, capture_output=True, text=True).stdout

    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "-b", "main")
    (path / "a.txt").write_text("a\n")
    (path / "b c.txt").write_text("b\n")
    git("add", ".")
    git("commit", "-qm", "first commit")
    (path / "a.txt").write_text("a2\n")
    git("commit", "-qam", "second: änderung")
    git("branch", "feature")
    (path / "a.txt").write_text("a3\n")
    (path / "new.txt").write_text("n\n")
    git("mv", "b c.txt", "moved.txt")
    return path


def _live_samples() -> list[Sample]:
    out = []
    repo = git_repo(Path(tempfile.mkdtemp(prefix="parism-ev-")) / "repo")
    for argv in (["ls", "-la", "/usr/bin"], ["ps", "aux"], ["df", "-h"], ["free", "-m"], ["id"], ["env"],
                 ["stat", "/etc/passwd", "/usr"], ["wc", "-lw", "/etc/passwd", "/etc/group"],
                 ["grep", "-n", "root", "/etc/passwd"], ["find", "/etc/apt"], ["du", "-ah", "/etc/apt"],
                 ["git", "status", "--porcelain"], ["git", "status"], ["git", "log", "-n", "5"],
                 ["git", "log", "--oneline"], ["git", "branch", "-v"], ["ss", "-tan"], ["netstat", "-tan"],
                 ["lsof", "-p", str(os.getpid())]):
        try:
            done = subprocess.run(argv, cwd=repo, capture_output=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0 and done.stdout:
            out.append(Sample("live:" + " ".join(argv), argv[0], tuple(argv[1:]), done.stdout.decode("utf-8", "replace")))
    return out


@cache
def samples() -> tuple[Sample, ...]:
    """Every sample whose parse succeeds with a parser that provides evidence."""
    kept = []
    for s in _fixture_samples() + _corpus_samples() + _documented_samples() + _live_samples():
        outcome = s.parse()
        if outcome.parse_error is None and outcome.parser is not None and outcome.parser.id in PROVIDERS \
                and outcome.parsed is not None:
            kept.append(s)
    return tuple(kept)
