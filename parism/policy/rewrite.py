"""Forced argument rewrites (contract §8.6 "Execution-argument rewriting", spec decision 4).

A repository's own ``.git/config`` is attacker-controlled when an agent inspects a foreign
checkout: ``core.fsmonitor``, ``core.pager``, hooks, ``gpg.program`` (run by ``%G?`` formats),
diff drivers and clean/smudge filters all name programs that read-only git commands would run.
Command-line ``-c`` settings beat repository config, so git always gets them in front; filter
drivers have free names, so the ones the repository declares (``gitrepo.find_repo``) are emptied
(an empty ``filter.<x>.clean`` disables the filter — verified with git 2.39), and a
``core.worktree`` the repository sets is overridden with ``--work-tree=<dir holding .git>``
(``-c core.worktree`` does not beat the repository file: git reads it while discovering the
repository — verified).
"""

from __future__ import annotations

from parism.policy.gitrepo import Repo

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
def git_args(args: list[str], sub_index: int | None, repo: Repo | None) -> list[str]:
    """``args`` with the forced settings in front and the no-external-program flags after the
    subcommand (at ``sub_index`` in ``args``).  ``repo`` is the repository git will use."""
    forced = list(GIT_FORCED)
    if repo is not None:
        for name in repo.filters:
            for part in ("clean", "smudge", "process"):
                forced += ["-c", f"filter.{name}.{part}="]
        if repo.moves_worktree:  # -c core.worktree does not win over the repo file; --work-tree does
            forced += [f"--work-tree={repo.work_dir}"]
    if sub_index is None:
        return forced + list(args)
    after = GIT_AFTER_SUB.get(args[sub_index], [])
    return forced + args[: sub_index + 1] + after + args[sub_index + 1 :]


# curl: ignore every .curlrc (it could add -o or -K) and speak HTTP(S) only, redirects included.
CURL_FORCED = ["--disable", "--proto", "=http,https", "--proto-redir", "=http,https"]
# dig: -r ignores ~/.digrc.
FORCED_PREFIX = {"curl": CURL_FORCED, "dig": ["-r"], "npx": ["--no"]}


def exec_args(cmd: str, args: list[str], sub_index: int | None, repo: Repo | None = None) -> list[str]:
    """The argument list to execute (without the program name)."""
    if cmd == "git":
        return git_args(args, sub_index, repo)
    return FORCED_PREFIX.get(cmd, []) + list(args)
