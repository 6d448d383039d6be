"""git's questions, asked where the call's own git will run (started by ``guard/git/ask.py``).

Run as ``python3 -I -S -c SOURCE ARGS...``: inside a sandbox with the call's mounts and uid/gid
(or, for a call whose command itself runs unsandboxed, directly as the server — the command's
identity then).  Nothing of Parism is importable here, and like the sandbox's helper it imports
only small built-in modules (no json, re, subprocess or threading: each import is start-up
time, paid on every reading); the git questions are spawned at once and read with ``select``.

ARGS: ``git timeout cap N flag... M (kind where K arg...)...``; kinds ``dirs`` (rev-parse),
``list`` (config listing), ``index`` (ls-files).  Printed on stdout, per job in order, six
length-prefixed fields (``<len>:<bytes>``): exit code (empty: git did not run or end), stdout,
stderr, problem, holder (``dirs``: the directory whose ``.git`` leads to git's answer) and
origins (``list``: every configuration file git read, real paths, NUL-separated); an empty
problem or holder is none.

What makes an answer a ``problem`` (the guard refuses it, naming the file):

- before any git runs, every configuration file git is expected to read from ``where`` and,
  recursively, every include they name (git's own ``--file --no-includes`` reading of each
  file) must be a readable regular file that is not in ``/proc``: a FIFO would leave git
  blocked in ``open``, a directory or a ``/proc`` file reads differently for every reader;
- after git answered, every include entry of the listing is checked the same way (one that
  vanished or became unreadable since, or that the pre-check could not foresee);
- a question that outlives ``timeout`` is killed.

The pre-check locates the repository by hand (the ``.git`` on the way up); it only ever adds
refusals — git's own answers decide everything else.
"""

import os
import select
import signal
import stat
import sys
import time

INCLUDE_KEYS = ("include.path",)
MAX_INCLUDE_FILES = 64
MAX_DEPTH = 10
ERR_CAP = 4096


def proc_dev():
    try:
        return os.stat("/proc").st_dev
    except OSError:
        return None


PROC_DEV = proc_dev()
KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
         (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def who():
    return "uid %d (gid %d)" % (os.getuid(), os.getgid())


def file_problem(path, missing_ok=False):
    """Why git must not read ``path`` as configuration (None: a readable regular file)."""
    try:
        pinned = os.open(path, os.O_PATH | os.O_CLOEXEC)  # opens nothing: no FIFO wait, no device
    except (FileNotFoundError, NotADirectoryError):
        return None if missing_ok else "'%s' does not exist in the call's view" % path
    except PermissionError:
        return "'%s' cannot be reached by %s" % (path, who())
    except OSError as exc:
        return "'%s' cannot be opened (%s)" % (path, exc.strerror)
    try:
        st = os.fstat(pinned)
    finally:
        os.close(pinned)
    for test, kind in KINDS:
        if test(st.st_mode):
            return "'%s' is %s, not a regular file" % (path, kind)
    real = os.path.realpath(path)
    if st.st_dev == PROC_DEV or real == "/proc" or real.startswith(("/proc/", "/sys/")):
        return "'%s' is a /proc file" % path
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except PermissionError:
        return "'%s' is not readable by %s" % (path, who())
    except OSError as exc:
        return "'%s' cannot be read (%s)" % (path, exc.strerror)
    try:
        again = os.fstat(fd)
    finally:
        os.close(fd)
    if (again.st_dev, again.st_ino) != (st.st_dev, st.st_ino):
        return "'%s' changed while it was checked" % path
    return None


def include_target(value, origin):
    """The file an include entry names (git: ``~/``, ``~user/``, relative to its file); a
    string: why it cannot be told."""
    if value is None or value == "":
        return None, "an include without a path in '%s'" % origin
    if value.startswith("%(prefix)/"):
        return None, "the include '%s' in '%s' is relative to git's install prefix" % (value, origin)
    if value.startswith("~"):
        user, _, rest = value[1:].partition("/")
        try:
            home = __import__("pwd").getpwnam(user).pw_dir if user else os.environ["HOME"]
        except (KeyError, OSError):
            return None, "the include '%s' in '%s' names an unknown home directory" % (value, origin)
        value = os.path.join(home, rest)
    if not os.path.isabs(value):
        value = os.path.join(os.path.dirname(origin), value)
    return os.path.normpath(value), None


def is_include(key):
    low = key.lower()
    return low == "include.path" or (low.startswith("includeif.") and low.endswith(".path"))


def entries(listing, fields):
    """(scope, origin, key, value) of a ``-z`` listing of ``fields`` fields per entry: 1 (key
    and value), 3 (``--show-scope --show-origin``: scope, origin, key and value)."""
    parts = listing.split(b"\0")
    out = []
    for i in range(0, len(parts) - fields, fields):
        scope, origin = ((parts[i].decode("utf-8", "surrogateescape"),
                          parts[i + 1].decode("utf-8", "surrogateescape")) if fields == 3 else ("", ""))
        key, nl, value = parts[i + fields - 1].decode("utf-8", "surrogateescape").partition("\n")
        out.append((scope, origin, key, value if nl else None))
    return out


def spawn_all(spec, runs):
    """(code, stdout, stderr, problem) of each (args, cwd) run, all at once, bounded: each git
    in a session of its own (a timeout or the cap kills that group: processes started here)."""
    procs = []
    for args, cwd in runs:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            os.chdir(cwd)  # one thread: each git starts where it is asked (no chdir file action in 3.11)
            pid = os.posix_spawn(spec["git"], [spec["git"], "--no-pager", *spec["flags"], *args], dict(os.environ),
                                 file_actions=[(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                                               (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)],
                                 setsid=True)
        except OSError as exc:
            pid, failed = None, "git could not be started (%s)" % exc.strerror
        else:
            failed = None
        os.close(out_w)
        os.close(err_w)
        procs.append({"pid": pid, "fds": {out_r: [], err_r: []}, "out": out_r, "err": err_r, "size": 0,
                      "problem": failed})
    deadline = time.monotonic() + spec["timeout"]
    open_fds = {fd: p for p in procs for fd in p["fds"]}
    while open_fds:
        left = deadline - time.monotonic()
        ready = select.select(list(open_fds), [], [], max(0.0, left))[0] if left > 0 else []
        if not ready:
            for p in {id(p): p for p in open_fds.values()}.values():
                p["problem"] = p["problem"] or ("git did not answer within %.0f s (a configuration file or "
                                                "include may be a FIFO or a device)" % spec["timeout"])
            break
        for fd in ready:
            p = open_fds[fd]
            chunk = os.read(fd, 65536)
            if not chunk:
                del open_fds[fd]
                continue
            p["fds"][fd].append(chunk)
            p["size"] += len(chunk)
            if p["size"] > spec["cap"] + ERR_CAP:
                p["problem"] = "git's answer is larger than %d bytes" % spec["cap"]
                for other in [f for f, q in open_fds.items() if q is p]:
                    del open_fds[other]
    answers = []
    for p in procs:
        code = None
        if p["pid"] is not None:
            if p["problem"]:
                os.killpg(p["pid"], signal.SIGKILL)  # our own child's session
            status = os.waitpid(p["pid"], 0)[1]
            code = None if p["problem"] else os.waitstatus_to_exitcode(status)
        for fd in p["fds"]:
            os.close(fd)
        out = b"".join(p["fds"][p["out"]])
        err = b"".join(p["fds"][p["err"]])[:ERR_CAP].decode("utf-8", "replace")
        if len(out) > spec["cap"]:
            p["problem"] = p["problem"] or "git's answer is larger than %d bytes" % spec["cap"]
        answers.append((code, b"" if p["problem"] else out, err, p["problem"]))
    return answers


def run_git(spec, args, cwd):
    """(code, stdout, stderr, problem) of one bounded git run."""
    return spawn_all(spec, [(args, cwd)])[0]


# -- the pre-check (hand-made location of the configuration files; it only adds refusals) -----

def gitdir_file(path):
    try:
        with open(path, "rb") as fh:
            line = fh.read(4096).decode("utf-8", "surrogateescape").strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    return os.path.normpath(os.path.join(os.path.dirname(path), line[7:].strip()))


def common_of(git_dir):
    try:
        with open(os.path.join(git_dir, "commondir"), "rb") as fh:
            rel = fh.read(4096).decode("utf-8", "surrogateescape").strip()
    except OSError:
        return git_dir
    return os.path.normpath(os.path.join(git_dir, rel)) if rel else git_dir


def expected_files(where):
    """The configuration files git will probably read from ``where`` (best effort)."""
    path = where
    while True:
        dot = os.path.join(path, ".git")
        git_dir = dot if os.path.isdir(dot) else gitdir_file(dot) if os.path.isfile(dot) else None
        if git_dir is None and os.path.isfile(os.path.join(path, "HEAD")) and os.path.isdir(
                os.path.join(path, "objects")):
            git_dir = path
        if git_dir is not None:
            return [os.path.join(common_of(git_dir), "config"), os.path.join(git_dir, "config.worktree")]
        parent = os.path.dirname(path)
        if parent == path:
            return []
        path = parent


def precheck(spec, where):
    """Every expected configuration file and what it includes, before git opens any of them."""
    todo = [(path, 0, None, None) for path in expected_files(where)]
    seen = set()
    while todo:
        path, depth, value, parent = todo.pop()
        top = parent is None
        if path in seen:
            continue  # an include cycle: git stops it itself (and fails the reading)
        seen.add(path)
        if len(seen) > MAX_INCLUDE_FILES or depth > MAX_DEPTH:
            return "more than %d configuration files or %d levels of includes" % (MAX_INCLUDE_FILES, MAX_DEPTH)
        problem = file_problem(path, missing_ok=top)
        if problem:
            return problem if top else "the include '%s' in '%s': %s" % (value, parent, problem)
        if not os.path.lexists(path):
            continue
        try:
            with open(path, "rb") as fh:
                if b"include" not in fh.read(spec["cap"] + 1).lower():
                    continue  # no include can be spelled without the word
        except OSError as exc:
            return "'%s' cannot be read (%s)" % (path, exc.strerror)
        code, out, err, problem = run_git(spec, ["config", "--file", path, "--no-includes", "--list", "-z"], "/")
        if problem or code != 0:
            return problem or "git cannot read '%s': %s" % (path, git_said(err))
        for _scope, _origin, key, value in entries(out, 1):
            if is_include(key):
                target, why = include_target(value, path)
                if why:
                    return why
                todo.append((target, depth + 1, value, path))
    return None


def git_said(err):
    said = " ".join(line.strip() for line in err.splitlines() if line.strip())
    return (said or "no message")[:500]


# -- after git answered -------------------------------------------------------------------

def leads_to(dot_git, git_dir):
    if os.path.isdir(dot_git):
        return os.path.realpath(dot_git) == os.path.realpath(git_dir)
    target = gitdir_file(dot_git)
    return target is not None and os.path.realpath(target) == os.path.realpath(git_dir)


def holder(start, git_dir):
    """The directory holding the ``.git`` that leads to ``git_dir`` (a bare repository: itself)."""
    path = os.path.abspath(start)
    while True:
        if leads_to(os.path.join(path, ".git"), git_dir):
            return path
        parent = os.path.dirname(path)
        if parent == path:
            return git_dir
        path = parent


def relative_base(relative, common_dir):
    """The directory git's relative paths were relative to (its working directory while it
    read, which git moves as it sets up): the one under which ``relative`` — the first
    relative origin of the repository's own scope — is ``<common dir>/config``."""
    want = os.path.normpath(os.path.join(common_dir, "config"))
    rel = os.path.normpath(relative)
    if rel.startswith("..") or not want.endswith("/" + rel):
        return None
    return want[: -len(rel) - 1] or "/"


def check_listing(listing, common_dir):
    """(origins, problem): every file the listing came from, every include it names, checked."""
    origins = []
    base = None
    for scope, origin, key, value in entries(listing, 3):
        if not origin.startswith("file:"):
            if is_include(key):
                return origins, "an include from '%s' (not a file)" % origin
            continue
        path = origin[5:]
        if not os.path.isabs(path):
            if base is None:
                base = relative_base(path, common_dir) if scope == "local" and common_dir else None
                if base is None:
                    return origins, "cannot tell where git read '%s' from" % path
            path = os.path.normpath(os.path.join(base, path))
        real = os.path.realpath(path)
        if real not in origins:
            problem = file_problem(path)
            if problem:
                return origins, problem
            origins.append(real)
        if is_include(key):
            target, why = include_target(value, path)
            problem = why or file_problem(target)
            if problem:
                return origins, "the include '%s' in '%s': %s" % (value, path, problem)
    return origins, None


def parse_args(argv):
    git, timeout, cap, nflags = argv[0], float(argv[1]), int(argv[2]), int(argv[3])
    flags, rest = argv[4:4 + nflags], argv[4 + nflags:]
    jobs, pos = [], 1
    for _ in range(int(rest[0])):
        kind, where, nargs = rest[pos], rest[pos + 1], int(rest[pos + 2])
        jobs.append({"kind": kind, "where": where, "args": rest[pos + 3:pos + 3 + nargs]})
        pos += 3 + nargs
    return {"git": git, "timeout": timeout, "cap": cap, "flags": flags}, jobs


def field(data):
    return b"%d:%s" % (len(data), data)


def text(value):
    return (value or "").encode("utf-8", "surrogateescape")


def main():
    spec, jobs = parse_args(sys.argv[1:])
    answers = [None] * len(jobs)
    runs, checked = [], {}
    for i, job in enumerate(jobs):
        where = job["where"]
        if where not in checked:
            checked[where] = ("'%s' is not a directory in the call's view" % where if not os.path.isdir(where)
                              else precheck(spec, where))
        problem = checked[where]
        if problem:
            answers[i] = {"code": None, "out": b"", "err": "", "problem": problem}
        else:
            runs.append(i)
    for i, (code, out, err, problem) in zip(runs, spawn_all(spec, [(jobs[i]["args"], jobs[i]["where"]) for i in runs])):
        answers[i] = {"code": code, "out": out, "err": err, "problem": problem}
    common = {}
    for job, answer in zip(jobs, answers):
        if job["kind"] == "dirs" and answer["code"] == 0 and not answer["problem"]:
            lines = answer["out"].decode("utf-8", "surrogateescape").split("\n")
            if len(lines) == 3 and os.path.isabs(lines[0]):
                answer["holder"] = holder(job["where"], lines[0])
                common[job["where"]] = os.path.normpath(os.path.join(job["where"], lines[1]))
    for job, answer in zip(jobs, answers):
        if job["kind"] == "list" and answer["code"] == 0 and not answer["problem"]:
            answer["origins"], answer["problem"] = check_listing(answer["out"], common.get(job["where"]))
    out = []
    for a in answers:
        out += [field(b"" if a["code"] is None else b"%d" % a["code"]), field(a["out"]), field(text(a["err"])),
                field(text(a["problem"])), field(text(a.get("holder"))),
                field(b"\0".join(text(o) for o in a.get("origins", ())))]
    sys.stdout.buffer.write(b"".join(out))


main()
