"""What a repository's own configuration would make git do — in git's own reading.

A repository an agent inspects is attacker-controlled, and its configuration names programs
(clean/smudge filters, textconv and external diff drivers, merge drivers, pagers, editors, ssh
commands, aliases).  A hand-made reading of git's config format keeps missing cases (``[filter
"e\\vil"]`` is ``evil``; ``include.path = x ; comment``; conditional includes; worktrees), so
git itself is asked, without running anything: ``git config --list --show-origin --show-scope
-z`` prints every effective entry after git has followed its includes and conditions.  Every
repository git will enter is asked too: a ``status`` or ``diff`` runs a child git in each
populated submodule — embedded repositories included (a gitlink in the index whose directory
holds its own ``.git``) — and the child reads its own configuration.  The ``-c`` settings of
the command line reach those children (``GIT_CONFIG_PARAMETERS`` survives git's submodule
environment), so the union of what every repository declares is neutralised once.

Reading runs ``git config``, ``git rev-parse`` and ``git ls-files --stage``: none of them runs a
filter, hook, pager or fsmonitor (the forced ``-c`` settings are given to them too).  They are
asked with the call's own identity inside the call's own view (``guard/git/ask.py``: the sandbox
the command gets, read-only), bounded in time and output, together with checks of every
configuration file and include git reads (a FIFO, a directory, a ``/proc`` file, a file the
identity cannot read, one missing or vanished: refused, naming it).  Any failure refuses the
call (``RepoProblem``, ``arg_not_allowed``): "not a repository" is only git saying so.

What git reported is kept per repository (``RepoConfig``): the sandbox binds a sanitised copy of
it over the repository's own files (``guard/git/configcopy.py``), so the git that runs reads what was
checked here, not what the files hold by then.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from parism.guard.git.ask import Answer, Asker, Job

# What git is always told (the reading runs under them too; rewrite.py puts them on every call).
GIT_FORCED_SETTINGS: tuple[tuple[str, str], ...] = (
    ("core.pager", "cat"),
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.sshCommand", "false"),
    ("core.editor", "false"),
    ("core.askPass", "false"),
    ("sequence.editor", "false"),
    ("credential.helper", ""),
    ("log.showSignature", "false"),
    ("diff.external", ""),
    ("gpg.program", "false"),
    ("gpg.openpgp.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    ("blame.ignoreRevsFile", ""),
    ("protocol.allow", "never"),
    ("status.submoduleSummary", "false"),
    ("diff.submodule", "short"),
    ("submodule.recurse", "false"),
    ("safe.directory", "*"),
)

# <section>.<free name>.<key> entries that name a program → the value that disables it.
# textconv becomes ``cat`` rather than empty: ``status -v`` has no --no-textconv and an empty
# textconv is an error ("cannot run"), ``cat`` shows the blob as it is.
DRIVER_VALUES: dict[tuple[str, str], str] = {
    ("filter", "clean"): "",
    ("filter", "smudge"): "",
    ("filter", "process"): "",
    ("filter", "required"): "false",
    ("diff", "textconv"): "cat",
    ("diff", "command"): "",
    ("merge", "driver"): "false",
    ("difftool", "cmd"): "false",
    ("mergetool", "cmd"): "false",
    ("credential", "helper"): "",
    ("remote", "uploadpack"): "false",
    ("remote", "receivepack"): "false",
    ("remote", "vcs"): "false",
    ("browser", "cmd"): "false",
    ("man", "cmd"): "false",
    # submodule.<name>.update = !command runs it on 'git submodule update' (no allowed query
    # runs that, but a child git must not find it either)
    ("submodule", "update"): "none",
}
# A filter named once gets all four keys (a process filter named only by .process still needs
# .clean/.smudge cleared: the order git consults them in is the driver's business).
FILTER_KEYS = ("clean", "smudge", "process", "required")
# Two-part keys whose name is free and whose value is a program: alias.<x>, pager.<cmd>.
FREE_TWO_PART: dict[str, str] = {"alias": "", "pager": "false"}
# core.* and other fixed keys that run something, beyond the forced ones (overridden when seen).
PROGRAM_KEYS: dict[str, str] = {
    "core.gitproxy": "", "core.alternaterefscommand": "", "uploadpack.packobjectshook": "",
    "interactive.difffilter": "", "gpg.ssh.defaultkeycommand": "false", "web.browser": "false",
}
MAX_REPOS = 32  # repositories read per call (top + submodules, nested included)
MAX_OVERRIDES = 512  # -c settings one call may need
GITLINK = "160000"


Entry = tuple[str, str, str, str | None]  # (scope, origin, key, value; None: a bare boolean key)


@dataclass(frozen=True)
class RepoConfig:
    """One repository's configuration as git read it: where its files are and every entry."""

    git_dir: str  # absolute: config.worktree lives here
    common_dir: str  # absolute: config lives here (a linked worktree shares its main's)
    entries: tuple[Entry, ...]


@dataclass
class Repo:
    """The repository git will use and what must be said to it on the command line."""

    work_dir: str  # the directory holding .git (the default work tree)
    git_dir: str  # git's own answer (rev-parse --absolute-git-dir)
    overrides: list[tuple[str, str]] = field(default_factory=list)  # (key, value) for -c
    moves_worktree: bool = False  # core.worktree set: --work-tree=<work_dir> is forced
    # git starts below its work tree's root: a .git made in between before the run would be
    # the repository git discovers, so --git-dir and --work-tree are forced (rewrite.py)
    found_from_below: bool = False
    repos: list[str] = field(default_factory=list)  # every repository read, top first
    origins: set[str] = field(default_factory=set)  # every config file git read (absolute)
    includes: bool = False  # an include.* / includeIf.* entry was read (its target may be missing)
    gitlinks: int = 0  # gitlink entries in the indexes read (populated or not)
    configs: list[RepoConfig] = field(default_factory=list)  # what git read, per repository
    sealed: list[str] = field(default_factory=list)  # unpopulated gitlink directories (kept so)


@dataclass(frozen=True)
class RepoProblem:
    """Why git may not run here (refused ``arg_not_allowed``)."""

    message: str


def config_flags(settings: list[tuple[str, str]] | tuple[tuple[str, str], ...]) -> list[str]:
    """``-c key=value`` for each setting (git splits at the first ``=``: keys never hold one)."""
    return [f for key, value in settings for f in ("-c", f"{key}={value}")]


FORCED_FLAGS = config_flags(GIT_FORCED_SETTINGS)
LIST_ARGS = ("config", "--list", "--show-origin", "--show-scope", "-z")
DIRS_ARGS = ("rev-parse", "--absolute-git-dir", "--git-common-dir")
INDEX_ARGS = ("ls-files", "--stage", "-z", "--full-name", "--", ":/")  # the whole index, from any subdirectory
NOT_A_REPOSITORY = "fatal: not a git repository"


def questions(where: str, enter: bool) -> list[Job]:
    """What is asked about the repository of ``where`` (its index too with ``enter``)."""
    return [Job("dirs", DIRS_ARGS, where), Job("list", LIST_ARGS, where),
            *([Job("index", INDEX_ARGS, where)] if enter else [])]


def _entries(listing: bytes) -> list[Entry]:
    """(scope, origin, key, value) from ``--show-scope --show-origin -z`` (value None: a bare
    boolean key)."""
    parts = listing.split(b"\0")
    out = []
    for i in range(0, len(parts) - 2, 3):
        scope, origin, kv = (p.decode("utf-8", "surrogateescape") for p in parts[i:i + 3])
        key, nl, value = kv.partition("\n")
        out.append((scope, origin, key, value if nl else None))
    return out


def _said(answer: Answer) -> str:
    """git's own last words (or the check's), for a refusal."""
    if answer.problem:
        return answer.problem
    said = " ".join(line.strip() for line in answer.err.splitlines() if line.strip())
    return (said or f"exit status {answer.code}")[:500]


def not_a_repository(answers: list[Answer]) -> bool:
    """Only git succeeding in saying so: rev-parse (and ls-files) fail with git's own "not a
    git repository", and the configuration listing succeeds with nothing of a repository."""
    dirs, listing, *index = answers
    if any(a.problem for a in answers) or listing.code != 0:
        return False
    if any(scope in ("local", "worktree") for scope, *_ in _entries(listing.out)):
        return False
    return all(a.code == 128 and a.err.startswith(NOT_A_REPOSITORY) for a in (dirs, *index))


def _split_key(key: str) -> tuple[str, str | None, str]:
    """section, subsection (may hold dots), name — git lower-cases section and name only."""
    section, _, rest = key.partition(".")
    sub, dot, name = rest.rpartition(".")
    return section.lower(), (sub if dot else None), name.lower()


def disarming(key: str) -> list[tuple[str, str]]:
    """The ``-c`` settings that switch off what ``key`` names (none: it names no program)."""
    section, sub, name = _split_key(key)
    if sub is not None and section == "filter":  # any key names the filter: disarm all of it
        return [(f"filter.{sub}.{part}", DRIVER_VALUES[("filter", part)]) for part in FILTER_KEYS]
    if sub is not None and (section, name) in DRIVER_VALUES:
        return [(f"{section}.{sub}.{name}", DRIVER_VALUES[(section, name)])]
    if sub is None and section in FREE_TWO_PART:
        return [(f"{section}.{name}", FREE_TWO_PART[section])]
    if key.lower() in PROGRAM_KEYS:
        return [(key, PROGRAM_KEYS[key.lower()])]
    return []


def _last_value(entries: tuple[Entry, ...], key: str) -> str | None:
    """The value git uses for a single-valued ``key``: the last one it read."""
    found = None
    for _scope, _origin, k, value in entries:
        if k.lower() == key:
            found = value
    return found


def _names_itself(git_dir: str, worktree: str | None, where: str) -> bool:
    """Whether a submodule's ``core.worktree`` (relative to its git dir, as git resolves it) is
    the submodule's own directory — what ``git submodule add``/``absorbgitdirs`` write
    (``../../../sub``).  Decided on the strings: ``git_dir`` must be a real path (git's
    ``--absolute-git-dir``; checked), each ``..`` then leaves a real directory exactly as the
    kernel would, and the rest must spell ``where`` itself, so git and the reader name one
    directory whatever it resolves to.  Any other value moves the work tree where the gitlinks
    read here are not, and is refused."""
    if not worktree or "\0" in worktree or os.path.realpath(git_dir) != git_dir:
        return False
    parts = worktree.split("/")
    if os.path.isabs(worktree):
        return os.path.normpath(worktree) == os.path.normpath(where) and ".." not in parts
    ups = 0
    while ups < len(parts) and parts[ups] == "..":
        ups += 1
    if any(p == ".." for p in parts[ups:]):
        return False
    base = git_dir
    for _ in range(ups):
        base = os.path.dirname(base)
    return os.path.normpath(os.path.join(base, *parts[ups:])) == os.path.normpath(where)


def git_dirs(answer: bytes, where: str) -> tuple[str, str] | None:
    """(git dir, common dir), absolute, from ``DIRS_ARGS``' answer in ``where``."""
    lines = answer.decode("utf-8", "surrogateescape").split("\n")
    if len(lines) != 3 or lines[-1] != "" or not os.path.isabs(lines[0]):
        return None
    return lines[0], os.path.normpath(os.path.join(where, lines[1]))


class _Reader:
    def __init__(self, asker: Asker) -> None:
        self.asker = asker
        self.overrides: dict[str, str] = {}
        self.problem: str | None = None
        self.repos: list[str] = []
        self.origins: set[str] = set()
        self.configs: list[RepoConfig] = []
        self.sealed: list[str] = []
        self.moves_worktree = False
        self.includes = False
        self.gitlinks = 0

    def add(self, key: str, value: str) -> None:
        if "=" in key or "\n" in key:
            # -c splits at the first '=': a driver named 'x=y' cannot be switched off there
            self.problem = (f"the repository declares '{key}', a name git's command line cannot "
                            "override (it holds '=' or a newline)")
            return
        self.overrides[key] = value

    def failed(self, answers: list[Answer], where: str) -> bool:
        """Any answer that is not a plain success refuses, naming what git (or the check) said."""
        for answer in answers:
            if answer.problem or answer.code != 0:
                self.problem = f"git could not read the repository of '{where}': {_said(answer)}"
                return True
        return False

    def config(self, dirs: Answer, listing: Answer, where: str, top: bool) -> bool:
        found = git_dirs(dirs.out, where)
        if found is None:
            self.problem = f"git's answer about the repository of '{where}' is not two directories"
            return False
        entries = tuple(e for e in _entries(listing.out) if e[0] != "command")
        self.configs.append(RepoConfig(*found, entries))
        self.origins.update(listing.origins)  # real paths, as the call's identity found them
        for _scope, _origin, key, _value in entries:
            self.includes = self.includes or key.lower().startswith(("include.", "includeif."))
            if key.lower() == "core.worktree":
                if top:
                    self.moves_worktree = True
                else:
                    worktree = _last_value(entries, "core.worktree")
                    if not _names_itself(found[0], worktree, where):
                        self.problem = (f"the submodule '{where}' moves its work tree elsewhere "
                                        f"(core.worktree = {worktree!r})")
            for setting in disarming(key):
                self.add(*setting)
        return self.problem is None

    def unpopulated(self, sub: str) -> None:
        """A gitlink git would not enter now; one populated before the run would be entered
        unread, so its directory is shown empty and read-only (``Repo.sealed``) — which needs
        a plain directory there."""
        if not os.path.isdir(sub) or os.path.islink(sub):
            self.problem = (f"the submodule '{sub}' has no directory of its own (missing, a file or a "
                            "symlink): a repository put there before git runs would be entered unread")
        elif len(self.sealed) >= MAX_REPOS:
            self.problem = f"more than {MAX_REPOS} submodules are not populated"
        else:
            self.sealed.append(sub)

    def repository(self, where: str, work_dir: str, *, top: bool, enter: bool,
                   first: list[Answer] | None = None) -> None:
        """Read one repository (config and, with ``enter``, its index at once) and then every
        populated gitlink of it, nested ones too.  ``first``: the top's answers, already read."""
        answers = first if first is not None else self.asker.ask(questions(where, enter))
        if isinstance(answers, str):
            self.problem = f"git could not read the repository of '{where}': {answers}"
            return
        if self.failed(answers, where) or not self.config(answers[0], answers[1], where, top) or not enter:
            return
        for entry in answers[2].out.split(b"\0"):
            if not entry.startswith(GITLINK.encode()):
                continue
            self.gitlinks += 1
            sub = os.path.join(work_dir, entry.partition(b"\t")[2].decode("utf-8", "surrogateescape"))
            if not os.path.lexists(os.path.join(sub, ".git")):
                self.unpopulated(sub)  # git does not enter it: the sandbox keeps it that way
                continue
            if len(self.repos) >= MAX_REPOS:
                self.problem = f"more than {MAX_REPOS} repositories (submodules) would be entered"
                return
            self.repos.append(sub)
            self.repository(sub, sub, top=False, enter=True)
            if self.problem:
                return


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def read_repo(start: str, asker: Asker, *, enter_submodules: bool) -> Repo | RepoProblem | None:
    """The repository git uses from ``start`` and the ``-c`` settings that disarm it, in the
    answers of ``asker`` (the call's identity and view).  None: not in a repository — only when
    git said so; every other failure is a ``RepoProblem``.  ``enter_submodules``: the
    subcommand runs git in submodules (status, diff), so theirs are read as well."""
    first = asker.ask(questions(start, enter_submodules))
    if isinstance(first, str):
        return RepoProblem(f"git could not read the repository of '{start}': {first}")
    if not_a_repository(first):
        return None
    reader = _Reader(asker)
    if reader.failed(first, start):
        return RepoProblem(reader.problem or "")
    found = git_dirs(first[0].out, start)
    if found is None or first[0].holder is None:
        return RepoProblem(f"git's answer about the repository of '{start}' is not two directories")
    git_dir, work_dir = found[0], first[0].holder
    reader.repos.append(work_dir)
    reader.repository(start, work_dir, top=True, enter=enter_submodules, first=first)
    if reader.problem is not None:
        return RepoProblem(reader.problem)
    if len(reader.overrides) > MAX_OVERRIDES:
        return RepoProblem(f"the repositories declare {len(reader.overrides)} programs to disable "
                           f"(more than {MAX_OVERRIDES})")
    return Repo(work_dir=work_dir, git_dir=git_dir, overrides=sorted(reader.overrides.items()),
                moves_worktree=reader.moves_worktree, repos=reader.repos, origins=reader.origins,
                found_from_below=work_dir != git_dir and start != work_dir and not _inside(start, git_dir),
                includes=reader.includes, gitlinks=reader.gitlinks, configs=reader.configs,
                sealed=reader.sealed)
