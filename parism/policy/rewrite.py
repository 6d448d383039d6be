"""Forced argument rewrites (contract §8.6 "Execution-argument rewriting", spec decision 4).

A repository's own ``.git/config`` is attacker-controlled when an agent inspects a foreign
checkout: ``core.fsmonitor``, ``core.pager``, hooks, ``gpg.program`` (run by ``%G?`` formats),
diff drivers and clean/smudge filters all name programs that read-only git commands would run.
Command-line ``-c`` settings beat repository config, so git always gets them in front; filter
drivers have free names, so the ones the repository declares are found and emptied (an empty
``filter.<x>.clean`` disables the filter — verified with git 2.39).
"""

from __future__ import annotations

import os
import re

GIT_FORCED = [
    "--no-pager",
    "-c", "core.pager=cat",
    "-c", "core.fsmonitor=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.sshCommand=false",
    "-c", "log.showSignature=false",
    "-c", "diff.external=",
    "-c", "gpg.program=false",
    "-c", "gpg.ssh.program=false",
    "-c", "gpg.x509.program=false",
    "-c", "protocol.allow=never",
    "-c", "safe.directory=*",
]
GIT_AFTER_SUB = {"log": ["--no-ext-diff", "--no-textconv"], "show": ["--no-ext-diff", "--no-textconv"],
                 "diff": ["--no-ext-diff", "--no-textconv"], "blame": ["--no-textconv"]}
_SECTION = re.compile(r'^\s*\[\s*filter\s*(?:"((?:[^"\\]|\\.)*)"|\.([^\]\s]+))\s*\]', re.IGNORECASE)
_INCLUDE = re.compile(r'^\s*path\s*=\s*"?([^"\n]+?)"?\s*$', re.IGNORECASE)
_MAX_CONFIG_BYTES = 1 << 20


def _git_dir(cwd: str) -> str | None:
    """The ``.git`` directory governing ``cwd`` (a ``gitdir:`` file is followed)."""
    path = cwd
    while True:
        candidate = os.path.join(path, ".git")
        if os.path.isdir(candidate):
            return candidate
        if os.path.isfile(candidate):
            try:
                with open(candidate, encoding="utf-8", errors="replace") as fh:
                    line = fh.read(4096).strip()
            except OSError:
                return None
            if line.startswith("gitdir:"):
                return os.path.normpath(os.path.join(path, line[7:].strip()))
            return None
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def _config_files(git_dir: str) -> list[str]:
    files = [os.path.join(git_dir, "config"), os.path.join(git_dir, "config.worktree")]
    common = os.path.join(git_dir, "commondir")
    if os.path.isfile(common):
        try:
            with open(common, encoding="utf-8", errors="replace") as fh:
                files.append(os.path.join(os.path.normpath(os.path.join(git_dir, fh.read().strip())), "config"))
        except OSError:
            pass
    modules = os.path.join(git_dir, "modules")
    if os.path.isdir(modules):
        for root, _dirs, names in os.walk(modules):
            if "config" in names:
                files.append(os.path.join(root, "config"))
    return files


def filter_drivers(cwd: str) -> list[str]:
    """Names of clean/smudge filter drivers declared in the repository's config files
    (includes followed, whatever their condition)."""
    git_dir = _git_dir(cwd)
    if git_dir is None:
        return []
    names: list[str] = []
    pending = _config_files(git_dir)
    seen: set[str] = set()
    while pending and len(seen) < 64:
        path = os.path.realpath(pending.pop())
        if path in seen or not os.path.isfile(path):
            continue
        seen.add(path)
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read(_MAX_CONFIG_BYTES)
        except OSError:
            continue
        for line in text.splitlines():
            if m := _SECTION.match(line):
                name = m.group(1) if m.group(1) is not None else m.group(2)
                if name not in names:
                    names.append(name)
            elif m := _INCLUDE.match(line):
                pending.append(os.path.join(os.path.dirname(path), os.path.expanduser(m.group(1))))
    return names


def git_args(args: list[str], sub_index: int | None, cwd: str) -> list[str]:
    """``args`` with the forced settings in front and the no-external-program flags after the
    subcommand (at ``sub_index`` in ``args``)."""
    forced = list(GIT_FORCED)
    for name in filter_drivers(cwd):
        for part in ("clean", "smudge", "process"):
            forced += ["-c", f"filter.{name}.{part}="]
    if sub_index is None:
        return forced + list(args)
    after = GIT_AFTER_SUB.get(args[sub_index], [])
    return forced + args[: sub_index + 1] + after + args[sub_index + 1 :]


# curl: ignore every .curlrc (it could add -o or -K) and speak HTTP(S) only, redirects included.
CURL_FORCED = ["--disable", "--proto", "=http,https", "--proto-redir", "=http,https"]
# dig: -r ignores ~/.digrc.
FORCED_PREFIX = {"curl": CURL_FORCED, "dig": ["-r"], "npx": ["--no"]}


def exec_args(cmd: str, args: list[str], sub_index: int | None, repo_dir: str) -> list[str]:
    """The argument list to execute (without the program name).  ``repo_dir`` is where git
    will look for its repository (the cwd, moved by any ``-C``)."""
    if cmd == "git":
        return git_args(args, sub_index, repo_dir)
    return FORCED_PREFIX.get(cmd, []) + list(args)
