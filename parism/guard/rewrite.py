"""Forced argument rewrites (contract §8.6 "Execution-argument rewriting", spec decision 4).

A repository's own ``.git/config`` is attacker-controlled when an agent inspects a foreign
checkout: ``core.fsmonitor``, ``core.pager``, hooks, ``gpg.program`` (run by ``%G?`` formats),
diff drivers and clean/smudge filters all name programs that read-only git commands would run.
Command-line ``-c`` settings beat repository config, so git always gets them in front; drivers
have free names, so the ones git reports for the repository and its submodules
(``gitrepo.read_repo``) are disabled (an empty ``filter.<x>.clean`` disables the filter —
verified with git 2.39), and a ``core.worktree`` the repository sets is overridden with
``--work-tree=<dir holding .git>`` (``-c core.worktree`` does not beat the repository file: git
reads it while discovering the repository — verified).
"""

from __future__ import annotations

from parism.guard.git.repo import GIT_FORCED_SETTINGS, Repo, config_flags

# Wherever a subcommand can show a diff and takes the flags; status -v cannot (no such flags):
# what the repositories declare as textconv is set to ``cat`` for it (gitrepo.DRIVER_VALUES).
GIT_AFTER_SUB = {"log": ["--no-ext-diff", "--no-textconv"], "show": ["--no-ext-diff", "--no-textconv"],
                 "diff": ["--no-ext-diff", "--no-textconv"], "blame": ["--no-textconv"]}

def git_args(args: list[str], sub_index: int | None, repo: Repo | None) -> list[str]:
    """``args`` with the forced settings in front and the no-external-program flags after the
    subcommand (at ``sub_index`` in ``args``).  ``repo`` is the repository git will use, with
    the settings that disarm what it (and every submodule git enters) declares."""
    settings = list(GIT_FORCED_SETTINGS) + (repo.overrides if repo is not None else [])
    forced = ["--no-pager", *config_flags(settings)]
    # rev-parse runs nothing a repository names: its answers stay git's own (--git-common-dir)
    pinned = repo is not None and repo.found_from_below and (sub_index is None or args[sub_index] != "rev-parse")
    if repo is not None and pinned:  # the repository the guard read, not one discovered on the way up later
        forced.append(f"--git-dir={repo.git_dir}")
    if repo is not None and (repo.moves_worktree or pinned):  # -c core.worktree does not win; --work-tree does
        forced.append(f"--work-tree={repo.work_dir}")
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
