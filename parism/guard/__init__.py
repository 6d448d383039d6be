"""The guard: decide, before any process exists, whether a call may run (contract §8).

Seed order, first failing step wins (the step is observable in ``reason``):

0. size — ``arg_not_allowed`` (``guard.max_args``, ``guard.max_arg_bytes``, 131,072 bytes per
   argument): refused before anything else reads the argv, never a late ``E2BIG``
1. allowlist — ``command_not_allowed`` (not listed, or no policy: deny by default, spec decision 4)
2. paths — ``path_not_allowed`` (cwd, and every value the policy types as a path)
3. injection — ``injection_pattern`` (``block_patterns`` on every value not typed ``data``;
   NUL and newline)
4. policy — ``arg_not_allowed`` (subcommands, flags, values, never-ending forms, URL schemes,
   metadata addresses, ``command_arg_restrictions``)

``check`` is also the whole of ``dry_run``.  It never raises: bad input becomes a refusal.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any, TYPE_CHECKING

from parism.wire.clip import clip
from parism.config import LoadedConfig
from parism.config.model import CommandPolicy
from parism.net.destinations import destinations
from parism.wire.envelope import Failure
from parism.run.sandbox.request import NO_GIT, GitPins, SandboxRequest
from parism.run.sandbox.roots import PinnedRoot, pin_roots
from parism.guard.paths import Roots, is_system_ancestor, looks_like_path, open_dir
from parism.run.childenv import build_child_env
from parism.guard.git.configcopy import ConfigCopy, CopyProblem, copies
from parism.guard.git.dirs import MAX_DIRS, git_dirs_below
from parism.guard.git.ask import Asker, ScriptAsker, direct_asker
from parism.guard.git.cache import RepoCache
from parism.guard.git.repo import FORCED_FLAGS, Repo, RepoProblem
from parism.guard.git.upstream import facts as upstream_facts
from parism.net.urls import host_problem, url_problem
from parism.parsers.contract import RepoFacts
from parism.guard.rewrite import exec_args
from parism.guard.rules import Classified, Value, classify
from parism.guard.size import ArgBudget, size_problem
from parism.argv.tokenize import Tokens

if TYPE_CHECKING:
    from parism.run.sandbox import Sandbox

PATH_KINDS = {"path"}
CHECKED_IF_PATHLIKE = {"any", "value"}


@dataclass
class Decision:
    allowed: bool
    failure: Failure | None = None
    policy: CommandPolicy | None = None
    tokens: Tokens | None = None
    cwd: str = ""
    exec_args: list[str] = field(default_factory=list)  # arguments to run, without the program name
    network: bool = False
    namespace_class: str = "isolated"
    binds: list[str] = field(default_factory=list)
    sandbox: dict[str, Any] = field(default_factory=dict)
    profile: str = ""
    subcommand: str | None = None
    # build (writable project): every .git under the cwd, bound read-only (guard/git/dirs.py);
    # None: not computed (read-only project)
    git_dirs: tuple[str, ...] | None = None
    # what the guard opened to check it, by the checked (real) path: the sandbox runs the
    # command only in the cwd of this (st_dev, st_ino) — no name is resolved twice
    opened: dict[str, os.stat_result] = field(default_factory=dict)
    # git: the sanitised copy of every configuration file git will read (guard/git/configcopy.py),
    # bound read-only over the file by the sandbox
    git_configs: tuple[ConfigCopy, ...] = ()
    # git status/diff: gitlink directories git would not enter, shown empty and read-only
    git_sealed: tuple[str, ...] = ()
    # the working directory as asked for (absolute, lexical): names a changed allowed root
    # in the refusal when the real one lies elsewhere now
    requested_cwd: str = ""
    # git: what git's reading of the repository says about the output that its text cannot
    # (``git branch -vv``: which branches have an upstream, guard/git/upstream.py)
    git_facts: RepoFacts | None = None
    # an allowed call's frozen record for the sandbox (run/sandbox/request.py): the one thing the
    # sandbox reads of this decision; None while checking and for a refused call
    request: SandboxRequest | None = None

    def freeze(self) -> SandboxRequest:
        """What the sandbox needs of this decision, frozen (``git`` pins in their own record)."""
        limits = self.sandbox.get("limits") or {}
        requires = self.policy.sandbox.requires if self.policy is not None else ()
        git = (GitPins(dirs=self.git_dirs, configs=tuple(self.git_configs), sealed=tuple(self.git_sealed))
               if self.git_dirs is not None or self.git_configs or self.git_sealed else NO_GIT)
        return SandboxRequest(cwd=self.cwd, opened=self.opened, network=self.network,
                              namespace=self.namespace_class, binds=tuple(self.binds),
                              requires=tuple(requires), limits=limits, git=git)


def _refuse(decision: Decision, reason: str, message: str, hint: str | None = None) -> Decision:
    decision.allowed = False
    decision.failure = Failure(kind="guard", reason=reason, message=message, hint=hint)
    return decision


# Programs that never end (or only re-run another program): the hint names what to do instead.
NEVER_ENDING = {
    "watch": "watch never ends and runs another program; run the command itself once",
    "yes": "yes never ends",
}


def _allowlist(cmd: str, cfg: LoadedConfig) -> tuple[str, str | None] | None:
    """(message, hint) when ``cmd`` may not run."""
    message = f"Command '{clip(cmd)}' is not in the allowed list"
    if cmd not in cfg.settings.guard.allowed_commands:
        hint = NEVER_ENDING.get(cmd)
        if cfg.policy(cmd) is not None:
            hint = f"add '{cmd}' to guard.allowed_commands to enable it"
        return message, hint
    if cfg.policy(cmd) is None:
        return message, (f"'{cmd}' has no policy in profile '{cfg.profile.name}'; "
                         "add one under guard.command_policies (or use a profile that has one)")
    return None


def _resolve_cwd(decision: Decision, cwd: str | None, cfg: LoadedConfig) -> str:
    """The real path of the working directory, opened once (``paths.open_dir``): its identity
    is recorded in ``decision.opened`` for the sandbox."""
    base = cwd if cwd else cfg.cwd
    asked = os.path.join(cfg.cwd, os.path.expanduser(base))
    decision.requested_cwd = os.path.normpath(asked)
    real_cwd, st = open_dir(asked)
    if st is not None:
        decision.opened[real_cwd] = st
    return real_cwd


def _path_values(classified: Classified, cwd: str) -> list[Value]:
    return [v for v in classified.values
            if v.kind in PATH_KINDS or (v.kind in CHECKED_IF_PATHLIKE and looks_like_path(v.text, cwd))]


def _check_paths(decision: Decision, classified: Classified, cfg: LoadedConfig,
                 pinned: tuple[PinnedRoot, ...]) -> Decision | None:
    cwd = decision.cwd
    if cwd not in decision.opened and not os.path.isdir(cwd):
        return _refuse(decision, "path_not_allowed", f"Working directory '{clip(cwd)}' does not exist")
    if is_system_ancestor(cwd):
        return _refuse(decision, "path_not_allowed",
                       f"Working directory '{clip(cwd)}' is outside allowed paths. The root directory and "
                       "ancestors of system directories are never allowed.",
                       "run from the project directory")
    allowed = cfg.settings.guard.allowed_paths
    if not allowed:
        return None
    # the roots as pinned at start (cwd is already the realpath of an existing directory)
    roots = Roots(pinned, known={cwd: cwd})
    if not roots.contains(cwd, "/"):
        changed = roots.changed_holding(decision.requested_cwd or cwd, "/") or roots.changed_holding(cwd, "/")
        return _refuse(decision, "path_not_allowed",
                       f"Working directory '{clip(cwd)}' is outside allowed paths. Allowed: {', '.join(allowed)}"
                       + (f" ({clip(changed)})" if changed else ""))
    for value in _path_values(classified, cwd):
        if "\0" in value.text:
            continue  # refused by the injection step
        if not roots.contains(value.text, cwd):
            changed = roots.changed_holding(value.text, cwd)
            return _refuse(decision, "path_not_allowed",
                           f"Path argument '{clip(value.arg)}' resolves outside allowed paths. "
                           f"Allowed: {', '.join(allowed)}" + (f" ({clip(changed)})" if changed else ""))
    return None


def _check_repo(decision: Decision, repo: Repo | RepoProblem | None, cfg: LoadedConfig,
                pinned: tuple[PinnedRoot, ...]) -> Decision | None:
    """The repository git will use (and every submodule it enters) lies inside the allowed
    paths, and everything its configuration names can be switched off."""
    if isinstance(repo, RepoProblem):
        return _refuse(decision, "arg_not_allowed", f"git may not run here: {repo.message}",
                       "inspect this repository's configuration with cat .git/config")
    allowed = cfg.settings.guard.allowed_paths
    if repo is None or not allowed:
        return None
    roots = Roots(pinned, known={decision.cwd: decision.cwd})
    for where in (repo.git_dir, *repo.repos):
        if not roots.contains(where, "/"):
            return _refuse(decision, "path_not_allowed",
                           f"Repository '{clip(where)}' used by git is outside allowed paths. "
                           f"Allowed: {', '.join(allowed)}",
                           "run git from a repository inside the allowed paths")
    for origin in sorted(repo.origins):  # an include may name any file; git read it for us
        if not roots.contains(origin, "/"):
            return _refuse(decision, "path_not_allowed",
                           f"git's configuration includes '{clip(origin)}', outside allowed paths. "
                           f"Allowed: {', '.join(allowed)}")
    return None


def _pin_reading(decision: Decision, repo: Repo) -> Decision | None:
    """What the sandbox shows git so that it reads what was checked: the copies of its
    configuration files (``gitcopy.py``) and the gitlinks it did not enter, sealed."""
    made = copies(repo)
    if isinstance(made, CopyProblem):
        return _refuse(decision, "arg_not_allowed", f"git may not run here: {made}",
                       "inspect this repository's configuration with cat .git/config")
    decision.git_configs = tuple(made)
    decision.git_sealed = tuple(repo.sealed)
    return None


#: ``block_patterns`` that are characters of a file name, not syntax, in a value the policy types
#: as a path: no shell runs, and the program only opens the name (``ls -l 'p -> q'``).
NAME_PATTERNS = frozenset({">", ">>"})


def _check_injection(decision: Decision, classified: Classified, args: list[str],
                     cfg: LoadedConfig) -> Decision | None:
    """NUL anywhere; newline/CR and ``block_patterns`` outside the ``data`` values, except that
    in a ``path`` value newline, CR, ``>`` and ``>>`` are part of the name (docs/guard.md,
    "Injection patterns").

    Why paths: no shell ever runs, so these characters mean something only to a program whose
    own grammar reads them — a header or config line (newline, CR), a shell a package manager
    starts (``npm run``) — and a value the policy types as a path is a name the program opens,
    never such text.  Everywhere else (values, untyped operands) they are still refused.

    One pass over the argument bytes: an argument's data and path values (at most a few:
    ``-e P`` and ``--format=P`` forms) are looked up by index, never by scanning every value."""
    data_at: dict[int, list[str]] = {}
    path_at: dict[int, list[str]] = {}
    for v in classified.values:
        if v.kind == "data":
            data_at.setdefault(v.index, []).append(v.text)
        elif v.kind in PATH_KINDS:
            path_at.setdefault(v.index, []).append(v.text)
    patterns = [p for p in cfg.settings.guard.block_patterns if p]
    for index, arg in enumerate(args):
        if "\0" in arg:
            return _refuse(decision, "injection_pattern",
                           f"Blocked pattern 'NUL' detected in argument {clip(repr(arg))}")
        checked = arg
        for text in data_at.get(index, ()):
            if checked.endswith(text):
                checked = checked[: len(checked) - len(text)]
        name = ""  # the path value at the end of this argument (its name characters are data)
        for text in path_at.get(index, ()):
            if text and checked.endswith(text):
                checked, name = checked[: len(checked) - len(text)], text
        if name:
            for pattern in patterns:
                if pattern not in NAME_PATTERNS and pattern in name:
                    return _refuse(decision, "injection_pattern",
                                   f"Blocked pattern '{pattern}' detected in argument '{clip(arg)}'",
                                   "no shell runs the command, so shell syntax has no effect; pass each "
                                   "argument separately, or put patterns/format strings in a flag the "
                                   "policy marks as data")
        if "\n" in checked or "\r" in checked:
            return _refuse(decision, "injection_pattern",
                           f"Blocked pattern 'newline' detected in argument {clip(repr(arg))}")
        for pattern in patterns:
            if pattern in checked:
                return _refuse(decision, "injection_pattern",
                               f"Blocked pattern '{pattern}' detected in argument '{clip(arg)}'",
                               "no shell runs the command, so shell syntax has no effect; pass each "
                               "argument separately, or put patterns/format strings in a flag the "
                               "policy marks as data")
    return None


def _check_policy(decision: Decision, cmd: str, classified: Classified, cfg: LoadedConfig) -> Decision | None:
    policy = decision.policy
    assert policy is not None
    for violation in classified.violations:
        return _refuse(decision, "arg_not_allowed",
                       f"Argument '{clip(violation.arg)}' is not allowed for command '{cmd}': "
                       f"{clip(violation.detail)}",
                       violation.hint)
    restriction = cfg.settings.guard.command_arg_restrictions.get(cmd)
    if restriction:
        for tok in classified.tokens.flags:
            if tok.name in restriction.blocked_flags:
                return _refuse(decision, "arg_not_allowed",
                               f"Argument '{clip(tok.text)}' is not allowed for command '{cmd}'",
                               f"blocked by guard.command_arg_restrictions.{cmd}")
    for value in classified.values:
        problem = _network_problem(value, cfg) if value.kind in ("url", "host", "dns") else None
        if problem:
            return _refuse(decision, "arg_not_allowed",
                           f"Argument '{clip(value.arg)}' is not allowed for command '{cmd}': {clip(problem)}")
    return None


def _network_problem(value: Value, cfg: LoadedConfig) -> str | None:
    """The argv-level destination check (the egress proxy is the wall, docs/security.md)."""
    dest = destinations(tuple(cfg.settings.sandbox.network_allow))
    if value.kind == "url":
        return url_problem(value.text, dest)
    if value.kind == "host":  # ping: its loopback is its own network namespace's
        return host_problem(value.text, 0, dest, own_loopback=True)
    if value.text.startswith("@"):  # the server dig contacts; query names are not contacted
        return host_problem(value.text[1:], 53, dest)
    return None


# Subcommands that run a child git in every populated submodule (its own configuration).
ENTERS_SUBMODULES = frozenset({"status", "diff"})


def _git_repo(decision: Decision, classified: Classified, setup: Setup) -> Repo | RepoProblem | None:
    """The repository git will use — the cwd (already a realpath) moved by each ``-C`` — in
    git's own reading (``guard/git/repo.py``), asked with the call's identity in the call's
    view (``guard/git/ask.py``), kept while its files are unchanged (``guard/git/cache.py``)."""
    where = decision.cwd
    for moved in classified.tokens.values("-C"):
        where = os.path.join(where, os.path.expanduser(moved))
    policy = decision.policy
    binds = [os.path.expanduser(b) for b in policy.sandbox.binds] if policy is not None else []
    asker = setup.git_asker(decision.cwd, decision.opened.get(decision.cwd), binds)
    if isinstance(asker, str):
        return RepoProblem(f"git's questions cannot be asked as the call would run: {asker}")
    return setup.git_repos.read(os.path.realpath(where), asker,
                                enter_submodules=classified.subcommand in ENTERS_SUBMODULES)


class Setup:
    """What a decision takes from the configuration alone, computed once per configuration.

    Why: the sandbox table of a decision merges the profile's and the settings' sandbox tables
    and the command's limits (pydantic dumps), the same on every call. The engine builds one
    ``Setup`` and passes it to every ``check``; without one, ``check`` builds it for that call.
    Nothing that depends on the file system is kept here but the allowed roots, pinned once and
    used only while unchanged (``run/sandbox/roots.py``), and git's reading of a repository, used only
    while the files it depends on are unchanged (``guard/git/cache.py``): other paths are resolved
    on every call."""

    def __init__(self, cfg: LoadedConfig, sandbox: Sandbox | None = None,
                 roots: tuple[PinnedRoot, ...] | None = None) -> None:
        self.cfg = cfg
        # the allowed roots as pinned when the engine loaded its configuration (run/sandbox/roots.py),
        # shared with the sandbox; pinned here for a Setup built without them
        self.roots = roots if roots is not None else pin_roots(cfg.settings.guard.allowed_paths)
        self.child_env = build_child_env(cfg, os.environ).env
        self.arg_budget = ArgBudget.from_config(cfg, self.child_env)
        # where the guard asks git about a repository: the sandbox stage that will run the
        # call (the engine's own; one of this configuration's when checked alone)
        self._sandbox = sandbox
        self._sandbox_lock = threading.Lock()
        self.git_repos = RepoCache()  # keyed by each asker's identity and view too
        self._base = {**cfg.profile.sandbox, **cfg.settings.sandbox.model_dump()}
        self._limits: dict[str, dict[str, Any]] = {}

    def sandbox(self) -> Any:
        with self._sandbox_lock:
            if self._sandbox is None:
                from parism.run.sandbox import Sandbox  # the guard alone (dry runs, tests): its own,
                self._sandbox = Sandbox.from_config(self.cfg, roots=self.roots)
                self._sandbox.pool_size = 0  # unpooled: nothing pre-started outlives the check
            return self._sandbox

    def git_asker(self, cwd: str, st: os.stat_result | None, binds: list[str]) -> Asker | str:
        """Who asks git about a repository for a call in ``cwd`` (as the guard opened it):
        a sandbox of the call's own mounts and identity (``Sandbox.question_plan``), directly
        when the call's command runs unsandboxed, or a string saying why nobody may."""
        sandbox = self.sandbox()
        plan = sandbox.question_plan(cwd, st, binds, dict(self.child_env))
        if isinstance(plan, str):
            return plan
        if plan is None:
            return direct_asker(self.child_env, FORCED_FLAGS)
        return ScriptAsker(key=("sandbox", plan), env=self.child_env, python=plan.python, cwd=plan.cwd,
                           launch=lambda _spec: sandbox.question_launcher(plan, st), flags=FORCED_FLAGS)

    def sandbox_table(self, cmd: str, policy: CommandPolicy, network: bool, binds: list[str]) -> dict[str, Any]:
        """The decision's ``sandbox``: a fresh dict (and ``limits`` dict) for each decision."""
        limits = self._limits.get(cmd)
        if limits is None:
            limits = self._limits[cmd] = {**self._base["limits"],
                                          **policy.sandbox.limits.model_dump(exclude_none=True)}
        return {**self._base, "namespace": policy.sandbox.namespace, "network": network,
                "binds": binds, "limits": dict(limits)}


def _sandbox(decision: Decision, cmd: str, policy: CommandPolicy, setup: Setup) -> None:
    box = policy.sandbox
    decision.namespace_class = box.namespace
    decision.network = box.network and setup.cfg.settings.sandbox.network
    decision.binds = [os.path.expanduser(b) for b in box.binds]
    decision.sandbox = setup.sandbox_table(cmd, policy, decision.network, decision.binds)


def check(cmd: str, args: list[str], cwd: str | None, cfg: LoadedConfig, setup: Setup | None = None) -> Decision:
    """Run the four guard steps; the returned ``Decision`` says whether and how to run.

    ``setup``: ``Setup(cfg)`` kept by the caller across calls (one built here otherwise).
    Never raises: malformed input is refused, and an unexpected error inside a step refuses the
    call too (fail closed) with the error named in the message."""
    decision = Decision(allowed=False, profile=cfg.profile.name)
    if not isinstance(cmd, str) or not isinstance(args, (list, tuple)) or not all(isinstance(a, str) for a in args):
        return _refuse(decision, "arg_not_allowed", "Command must be a string and arguments a list of strings")
    setup = setup if setup is not None and setup.cfg is cfg else Setup(cfg)
    too_big = size_problem(cmd, args, setup.arg_budget)
    if too_big is not None:
        return _refuse(decision, "arg_not_allowed", *too_big)
    try:
        return _check(decision, cmd, list(args), cwd, cfg, setup)
    except Exception as exc:  # noqa: BLE001 - a guard bug must refuse, never run the command
        decision.exec_args = []
        return _refuse(decision, "arg_not_allowed",
                       f"The guard could not check this call ({type(exc).__name__}: {exc}); refused")


def _check(decision: Decision, cmd: str, args: list[str], cwd: str | None, cfg: LoadedConfig,
           setup: Setup) -> Decision:
    refused = _allowlist(cmd, cfg)
    if refused:
        return _refuse(decision, "command_not_allowed", *refused)
    policy = cfg.policy(cmd)
    assert policy is not None
    decision.policy = policy
    try:
        decision.cwd = _resolve_cwd(decision, cwd, cfg)
    except (ValueError, OSError) as exc:
        return _refuse(decision, "path_not_allowed", f"Working directory '{clip(str(cwd))}' is not valid: {exc}")
    classified = classify(args, policy)
    decision.tokens = classified.tokens
    decision.subcommand = classified.subcommand
    if (_check_paths(decision, classified, cfg, setup.roots) or _check_injection(decision, classified, args, cfg)
            or _check_policy(decision, cmd, classified, cfg)):
        return decision
    repo = _git_repo(decision, classified, setup) if cmd == "git" else None
    if _check_repo(decision, repo, cfg, setup.roots):
        return decision
    assert not isinstance(repo, RepoProblem)
    if repo is not None and _pin_reading(decision, repo):
        return decision
    if repo is not None and classified.subcommand == "branch" and repo.configs:
        decision.git_facts = upstream_facts(repo.configs[0].entries)
    sub_index = next((t.index for t in classified.tokens.positionals if t.text == classified.subcommand), None)
    decision.exec_args = exec_args(cmd, args, sub_index if classified.subcommand else None, repo)
    _sandbox(decision, cmd, policy, setup)
    if decision.sandbox.get("writable_project"):
        decision.git_dirs = git_dirs_below(decision.cwd)
        if decision.git_dirs is None:
            decision.exec_args = []
            return _refuse(decision, "path_not_allowed",
                           f"Working directory '{clip(decision.cwd)}' holds more than {MAX_DIRS} directories: "
                           "not every .git below it can be kept read-only",
                           "run from a smaller directory of the project")
    decision.allowed = True
    decision.request = decision.freeze()
    return decision
