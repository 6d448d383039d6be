"""The tokenizer reads every default-allowed command's argv the way the real program does.

Each row names an argv, the words the guard's tokenizer must read as operands (positionals,
subcommand words excluded) and an effect seen when the **real binary** runs that argv in a
scratch directory holding files named like flags (``-n``, ``-l``, ``-p``…): an output substring
that only appears if the program read the words the same way (``cat -- -n`` prints the file
``-n``; ``ls -1 d -d`` lists ``d`` itself, so the ``-d`` after the operand was an option).  The
expected values were checked against the programs (GNU coreutils/findutils 9.1/4.9, procps 4,
iputils, git 2.39, curl 7.88 …), not copied from Parism.  Rows marked ``refused`` must be refused
by the guard; their real run shows what the refused reading would have done — for find that is an
armed trap: ``find -- . -exec touch MARK +`` does run the command.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from parism.config import LoadedConfig, load_config
from parism.guard import Decision, check

MARK = "{mark}"  # replaced by the marker path of the row


@dataclass(frozen=True)
class Row:
    cmd: str
    args: tuple[str, ...]
    operands: tuple[str, ...] | None  # None: the tokenizer refuses before reading operands
    expect: str  # substring of the real program's stdout+stderr ("" = none checked)
    refused: bool = False
    absent: str | None = None  # must not appear in the real output
    marker: bool = False  # the real run creates MARK (a trap that fires)
    git: bool = False  # run inside the scratch repository


def r(cmd: str, *args: str, operands: tuple[str, ...] | None = (), expect: str = "", **kw: object) -> Row:
    return Row(cmd, tuple(args), operands, expect, **kw)  # type: ignore[arg-type]


ROWS: list[Row] = [
    # ---- coreutils & co: getopt (-- ends options; options may follow operands)
    r("ls", "--", "-l", operands=("-l",), expect="-l", absent="total"),
    r("ls", "-1", "d", "-d", operands=("d",), expect="d"),
    r("cat", "--", "-n", operands=("-n",), expect="content-n"),
    r("cat", "x", "-n", operands=("x",), expect="     1\txline"),
    r("head", "-n", "1", "--", "-n", operands=("-n",), expect="content-n"),
    r("head", "x", "-c", "2", operands=("x",), expect="xl", absent="xline"),
    r("tail", "-c", "3", "--", "-n", operands=("-n",), expect="-n"),
    r("wc", "x", "-l", operands=("x",), expect="1 x"),
    r("wc", "-c", "--", "-l", operands=("-l",), expect="10 -l"),
    r("stat", "x", "-c", "%s", operands=("x",), expect="6"),
    r("stat", "-c", "%n", "--", "-l", operands=("-l",), expect="-l"),
    r("du", "-s", "--", "-l", operands=("-l",), expect="\t-l"),
    r("df", "x", "--output=target", operands=("x",), expect="Mounted on"),
    r("tree", "--", "-l", operands=("-l",), expect="-l"),
    r("grep", "xline", "x", "-n", operands=("xline", "x"), expect="1:xline"),
    r("grep", "-e", "content", "--", "-n", operands=("-n",), expect="content-n", absent="1:"),
    r("id", "root", "-u", operands=("root",), expect="0"),
    r("id", "-u", "--", "root", operands=("root",), expect="0"),
    r("date", "-u", "+%Y", "-d", "@0", operands=("+%Y",), expect="1970"),
    r("uname", "-s", expect="Linux"),
    r("uname", "--", "-a", operands=("-a",), expect="extra operand", refused=True),
    r("free", "-b", "-t", expect="total"),
    r("free", "--", "-m", operands=("-m",), expect="Usage", refused=True),
    r("hostname", "--", "-s", operands=("-s",), expect="hostname", refused=True),  # would set the name
    r("pwd", "-P", expect="/"),
    r("env", "--", "true", operands=("true",), refused=True),  # would run a program
    r("netstat", "--", "-t", operands=("-t",), refused=True),
    r("ss", "-n", "--", "-t", operands=("-t",), expect='rather than "-t"'),
    r("journalctl", "-n", "1", "--", "-q", operands=("-q",), expect="match '-q'", refused=True),
    r("systemctl", "--version", expect="systemd"),
    r("ping", "127.0.0.1", "-c", "1", "-W", "1", operands=("127.0.0.1",), expect="1 packets transmitted"),
    r("ping", "-c", "1", "-W", "1", "--", "127.0.0.1", operands=("127.0.0.1",), expect="1 packets transmitted"),
    r("curl", "http://nohost.invalid/", "-sS", "-w", "[%{url_effective}]", operands=("http://nohost.invalid/",),
      expect="[http://nohost.invalid/]"),
    r("curl", "-sS", "-w", "[%{url_effective}]", "--", "-v", operands=("-v",), expect="[http://-v/]"),
    # ---- first operand ends the options
    r("which", "ls", "-a", operands=("ls", "-a"), expect="/ls", absent="/bin/ls\n/"),
    r("which", "-a", "--", "ls", operands=("ls",), expect="/bin/ls"),
    r("lsof", "x", "-t", operands=("x", "-t"), expect="status error on -t"),
    r("terraform", "version", "-json", expect="terraform_version"),
    # ---- echo: "--" is a word, the first word ends the options
    r("echo", "--", "-n", "hi", operands=("--", "-n", "hi"), expect="-- -n hi\n"),
    r("echo", "hi", "-n", operands=("hi", "-n"), expect="hi -n\n"),
    # ---- no "--" at all
    r("ps", "-p", "1", "-o", "pid=", expect="1"),
    r("ps", "--", "-p", "1", operands=None, expect="garbage option", refused=True),
    r("dig", "--", "x", operands=None, expect="Invalid option: --", refused=True),
    # ---- find: "--" ends only the leading options, never the expression
    r("find", "--", ".", "-maxdepth", "0", operands=(".",), expect="."),
    r("find", "-P", ".", "-maxdepth", "0", operands=(".",), expect="."),
    r("find", "-H", "d", "-maxdepth", "0", operands=("d",), expect="d"),
    r("find", "--", ".", "-maxdepth", "0", "-exec", "touch", MARK, "{}", "+", operands=None, refused=True, marker=True),
    r("find", "-P", "--", "-maxdepth", "0", "-exec", "touch", MARK, "{}", "+", operands=None, refused=True, marker=True),
    r("find", "--", "-maxdepth", "0", "-exec", "touch", MARK, "{}", "+", "-quit", operands=None, refused=True, marker=True),
    r("find", ".", "-maxdepth", "0", "--", "-print", operands=None, expect="unknown predicate `--'", refused=True),
    r("find", "-L", ".", "-maxdepth", "0", operands=None, expect=".", refused=True),  # follows symlinks
    # ---- package managers and devops CLIs (nopt, apt-pkg, cobra, clap)
    r("apt", "list", "--", "-a", operands=("-a",), expect="Listing", absent="bash/"),
    r("npm", "ls", "--json", expect="{"),
    r("npm", "ls", "--", "--json", operands=("--json",), absent='"name"'),
    r("kubectl", "version", "-o", "json", "--client", expect='"clientVersion"'),
    r("kubectl", "version", "--client", "--", "-o", operands=("-o",), expect="Client Version:", refused=True),
    r("docker", "version", "--format", "{{.Client.Version}}", absent="Client:"),
    r("cargo", "--version", expect="cargo "),
    r("cargo", "-V", expect="cargo "),
    # ---- git, per subcommand (a flag means what its subcommand makes of it)
    r("git", "status", "--porcelain", "--", "-s", operands=("-s",), expect="?? -s", absent="u.txt", git=True),
    r("git", "status", "-uno", "--porcelain", expect="", absent="??", git=True),
    r("git", "status", "-s", "-b", expect="## main", git=True),
    r("git", "log", "--format=%s", "--", "-p", operands=("-p",), expect="add -p", absent="third", git=True),
    r("git", "log", "HEAD", "--format=%s", "-n", "1", operands=("HEAD",), expect="third", absent="first", git=True),
    r("git", "log", "-1", "-u", "--format=%s", expect="@@", git=True),
    r("git", "show", "-s", "--format=[%s]", "HEAD", operands=("HEAD",), expect="[third]", git=True),
    r("git", "diff", "--stat", "HEAD~1", "--", "-p", operands=("HEAD~1", "-p"), expect="", absent="f.txt", git=True),
    r("git", "diff", "HEAD~2", "--name-only", operands=("HEAD~2",), expect="-p", git=True),
    r("git", "branch", "--list", "-v", expect="main", git=True),
    r("git", "branch", "-uorigin/main", operands=None, expect="set up to track", refused=True, git=True),
    r("git", "branch", "--set-upstream-to=origin/main", operands=None, expect="set up to track", refused=True,
      git=True),
    r("git", "rev-parse", "--abbrev-ref", "HEAD", operands=("HEAD",), expect="main", git=True),
    r("git", "rev-parse", "HEAD", "--show-toplevel", operands=("HEAD",), expect="repo", git=True),
    r("git", "ls-files", "-u", expect="", absent="f.txt", git=True),
    r("git", "ls-files", "--", "-p", operands=("-p",), expect="-p", absent="f.txt", git=True),
    r("git", "blame", "-s", "--", "-p", operands=("-p",), expect="pee", git=True),
    r("git", "blame", "-S", "/etc/hostname", "f.txt", operands=None, refused=True, git=True),  # reads a file
    r("git", "describe", "--always", "--tags", expect="v1", git=True),
    r("git", "shortlog", "-sn", "HEAD", operands=("HEAD",), expect="\tA", git=True),
    r("git", "tag", "-n", expect="v1", git=True),
    r("git", "tag", "-m", "msg", "evil", operands=None, refused=True, git=True),
    r("git", "remote", "-v", git=True),
    r("git", "--", "status", operands=None, refused=True, git=True),
]

DEFAULT_SUBCOMMANDS = {"git"}  # commands whose every subcommand must have a row


def _env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LC_ALL": "C.UTF-8",
            "TZ": "UTC", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "NO_COLOR": "1",
            "GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com", "GIT_COMMITTER_NAME": "A",
            "GIT_COMMITTER_EMAIL": "a@example.com", "TF_CLI_CONFIG_FILE": "/dev/null"}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("eoo")
    (root / "home").mkdir()
    (root / "-n").write_text("content-n\n")
    (root / "-l").write_text("content-l\n")
    (root / "x").write_text("xline\n")
    (root / "d").mkdir()
    (root / "marks").mkdir()
    repo = root / "repo"
    repo.mkdir()
    env = _env(root / "home")

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, timeout=30)

    if shutil.which("git"):
        git("init", "-q", "-b", "main")
        (repo / "f.txt").write_text("one\n")
        git("add", "f.txt")
        git("commit", "-q", "-m", "first")
        git("tag", "v1")
        (repo / "-p").write_text("pee\n")
        git("add", "--", "-p")
        git("commit", "-q", "-m", "add -p")
        (repo / "f.txt").write_text("one\ntwo\n")
        git("commit", "-q", "-am", "third")
        git("config", "remote.origin.url", str(root / "nowhere.git"))
        git("config", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")
        git("update-ref", "refs/remotes/origin/main", "HEAD")
        (repo / "u.txt").write_text("untracked\n")
        (repo / "-s").write_text("untracked too\n")
    return root


@pytest.fixture(scope="module")
def cfg(scratch: Path) -> LoadedConfig:
    loaded = load_config(cwd=str(scratch), environ={"HOME": str(scratch / "home"),
                                                    "PARISM_ALLOWED_PATHS": str(scratch)})
    assert loaded.errors == []
    return loaded


def _argv(row: Row, mark: Path) -> list[str]:
    return [a.replace(MARK, str(mark)) for a in row.args]


def _operands(decision: Decision) -> tuple[str, ...]:
    """The positionals the guard read, without the subcommand word."""
    assert decision.tokens is not None
    positionals = [t.text for t in decision.tokens.positionals]
    return tuple(positionals[1:] if decision.subcommand is not None else positionals)


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.cmd} {' '.join(r.args)}"[:70] for r in ROWS])
def test_tokenizer_reads_like_the_program(row: Row, scratch: Path, cfg: LoadedConfig) -> None:
    # inside the allowed paths, so only the reading of the argv can refuse a trap row
    mark = Path(tempfile.mkdtemp(dir=scratch / "marks")) / "MARK"
    cwd = scratch / "repo" if row.git else scratch
    argv = _argv(row, mark)
    decision = check(row.cmd, argv, str(cwd), cfg)
    if row.refused:
        assert not decision.allowed, f"{row} passed the guard"
        assert decision.failure is not None and decision.failure.reason in ("arg_not_allowed", "path_not_allowed")
    else:
        assert decision.allowed, decision.failure
    if row.operands is None:
        assert decision.tokens is None or not decision.tokens.ok or not decision.allowed
    else:
        assert _operands(decision) == row.operands
    binary = shutil.which(row.cmd)
    if binary is None:
        pytest.skip(f"{row.cmd} is not installed: the real-program half of the row cannot run")
    result = subprocess.run([binary, *argv], cwd=cwd, env=_env(scratch / "home"), capture_output=True,
                            stdin=subprocess.DEVNULL, timeout=60)
    out = (result.stdout + result.stderr).decode("utf-8", "replace")
    assert row.expect in out, f"real {row.cmd} did not show {row.expect!r}: {out[-600:]!r}"
    if row.absent is not None:
        assert row.absent not in out, f"real {row.cmd} showed {row.absent!r}: {out[-600:]!r}"
    assert mark.exists() == row.marker, "the trap's marker file"


def test_every_default_command_and_git_subcommand_has_a_row(cfg: LoadedConfig) -> None:
    covered = {r.cmd for r in ROWS}
    missing = [c for c in cfg.settings.guard.allowed_commands if c not in covered]
    installed_missing = [c for c in missing if shutil.which(c)]
    assert installed_missing == [], installed_missing
    policy = cfg.policy("git")
    assert policy is not None and policy.subcommands
    subs = {r.args[0] for r in ROWS if r.cmd == "git"}
    assert set(policy.subcommands) <= subs, set(policy.subcommands) - subs
