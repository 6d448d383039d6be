"""``parism selftest``: the containment promises, checked on this host for the effective
configuration (docs/container.md: the first thing to run on a new host or in CI).

Each probe is a real attack run through the real pipeline (``Engine.run``: guard, sandbox,
executor, redaction) with the configuration's sandbox settings, profile and identity rule, and
— where one can be made — an *armed control*: the same attack run directly on the host, which
must fire, so that a probe that "held" proves something. The probes' commands are ``sh -c``
scripts (the guard never reads inside a ``data`` argument): the sandbox must hold whatever an
allowed command does. What the probes plant (a workspace, a secret outside it, a writable
directory outside it, a git repository whose configuration runs a filter) lives in one private
temporary directory, removed at the end; the network probes run in a network namespace of
their own (:mod:`parism.selftest.netns`), where a stand-in metadata address can exist.

A probe whose attack could not be judged (the command did not run, its result line is missing)
counts as broken: doubt never passes. ``sandbox.mode = "off"`` (or no usable bubblewrap) is
broken by itself: such a configuration cannot keep the promises.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import shutil
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

PROBE_TIMEOUT_MS = 20_000
DIRECT_TIMEOUT_S = 20.0
OUTLIVE_S = 6  # how long the escaping sleep lasts: bounded even if it escapes


def token(prefix: str) -> str:
    """A marker no redaction rule masks (lowercase letters only) and nothing else prints."""
    return f"{prefix}-canary-" + "".join(secrets.choice(string.ascii_lowercase) for _ in range(20))


@dataclass
class Row:
    """One probe's outcome: ``held`` is the promise; ``control`` says whether the same attack
    without Parism fired (``fired``), could not be armed here (``unavailable: why``) or has no
    meaning for this probe (``none``)."""

    name: str
    promise: str
    held: bool
    control: str
    detail: str
    applicable: bool = True


@dataclass
class Report:
    ok: bool
    profile: str
    sandbox: dict[str, Any]
    rows: list[Row] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "profile": self.profile, "sandbox": self.sandbox,
                "probes": [asdict(r) for r in self.rows]}

    def table(self) -> str:
        sb = self.sandbox
        head = (f"parism selftest: profile {self.profile}, sandbox.mode {sb.get('mode')}, level {sb.get('level')}, "
                f"identity {sb.get('uid_rule')} ({sb.get('identity')}), uid {sb.get('uid')}")
        width = max(len(r.name) for r in self.rows)
        lines = [head, f"{'PROBE':<{width}}  RESULT  CONTROL      DETAIL"]
        for r in self.rows:
            result = "held" if r.held else "BROKEN"
            if not r.applicable:
                result = "n/a"
            lines.append(f"{r.name:<{width}}  {result:<6}  {r.control[:11]:<11}  {r.promise}: {r.detail}")
        lines.append("every promise held" if self.ok else "PROMISES BROKEN: do not rely on this configuration")
        return "\n".join(lines) + "\n"


@dataclass
class Site:
    """What the probes plant, in one private directory: removed at the end."""

    base: Path
    work: Path  # the workspace (the only allowed path)
    outside: Path  # writable by everyone, outside the workspace
    secret: Path  # readable by everyone, outside the workspace
    secret_token: str

    @classmethod
    @contextmanager
    def made(cls) -> Iterator[Site]:
        base = Path(tempfile.mkdtemp(prefix="parism-selftest-")).resolve()
        try:
            base.chmod(0o755)
            work, outside = base / "work", base / "outside"
            work.mkdir(mode=0o755)
            outside.mkdir()
            outside.chmod(0o777)  # so no uid is stopped by a permission: only the sandbox stops it
            secret_token = token("secret")
            secret = base / "secret.txt"
            secret.write_text(f"{secret_token}\n")
            secret.chmod(0o644)
            yield cls(base, work, outside, secret, secret_token)
        finally:
            shutil.rmtree(base, ignore_errors=True)


def probe_config(config_path: str | None, work: Path, network: bool = False) -> Any:
    """The effective configuration with the probes' workspace and commands: the sandbox,
    identity and profile as configured; ``sh`` allowed with a ``data`` script (and the network
    when ``network``), git with the profile's own policy."""
    from parism.config import load_config
    from parism.config.model import CommandPolicy, CommandSandbox

    cfg = load_config(config_path)
    if cfg.errors:
        return cfg
    guard = cfg.settings.guard
    git = cfg.policy("git")
    guard.command_policies = {
        **({"git": git} if git is not None else {}),
        "sh": CommandPolicy(flags={"-c": "data"}, positionals="any", sandbox=CommandSandbox(network=network)),
    }
    guard.allowed_commands = ["sh", *(["git"] if git is not None else [])]
    guard.allowed_paths = [str(work)]
    guard.max_timeout_ms = max(guard.max_timeout_ms, PROBE_TIMEOUT_MS)
    guard.max_output_bytes = max(guard.max_output_bytes, 1 << 20) if guard.max_output_bytes else 0
    cfg.cwd = str(work)
    return cfg


def engine_for(cfg: Any) -> Any:
    from parism.engine import Engine

    return Engine(cfg)


def python() -> str:
    from parism.run.sandbox.probe import find_python

    return find_python() or "/usr/bin/python3"


@dataclass
class Ran:
    """A probe's run through the pipeline: what it printed (all of the envelope) and whether
    its script got to its result line."""

    text: str
    result: str | None  # the text after "RESULT " on the last such line
    failure: Any

    @property
    def ran(self) -> bool:
        return self.result is not None


def through(engine: Any, script: str, cwd: Path) -> Ran:
    env = engine.run("sh", ["-c", script], cwd=str(cwd), timeout_ms=PROBE_TIMEOUT_MS, format="json")
    raw = stream_text(env.stdout)
    # a leak is looked for in every byte that came back: output that is not text travels as
    # raw_base64 (environ files are NUL-separated), so it is decoded here, never skipped
    text = "\n".join((env.to_json(), raw, stream_text(env.stderr)))
    results = [ln[len("RESULT "):] for ln in raw.splitlines() if ln.startswith("RESULT ")]
    return Ran(text, results[-1] if results else None, env.failure)


def stream_text(field: Any) -> str:
    """A stream's text as the command printed it: ``raw``, or ``raw_base64`` decoded."""
    if field is None:
        return ""
    if field.raw_base64:
        return base64.b64decode(field.raw_base64).decode("utf-8", "replace")
    return field.raw or ""


def direct(script: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The same script without Parism: the armed control."""
    return subprocess.run(["/bin/sh", "-c", script], cwd=cwd, capture_output=True, text=True,
                          timeout=DIRECT_TIMEOUT_S, env=env or {"PATH": "/usr/bin:/bin"},
                          stdin=subprocess.DEVNULL)


def why_not(r: Ran) -> str:
    if r.failure is not None:
        return f"the probe did not run to its end ({r.failure.kind}/{r.failure.reason}: {r.failure.message[:160]})"
    return "the probe printed no result line"


# -- the probes -----------------------------------------------------------------------------

def write_outside(engine: Any, site: Site) -> Row:
    promise = "a command cannot write outside the workspace"
    target = site.outside / "written"
    script = f"echo x > '{target}' 2>/dev/null && echo RESULT wrote || echo RESULT denied"
    r = through(engine, script, site.work)
    exists = target.exists()
    held = r.ran and not exists
    detail = f"{target} {'was written' if exists else 'not written'}" if r.ran else why_not(r)
    control = direct(script, site.work)
    fired = target.exists() and "RESULT wrote" in control.stdout
    target.unlink(missing_ok=True)
    return Row("write_outside", promise, held and not exists, "fired" if fired else "did not fire", detail)


def read_secret(engine: Any, site: Site) -> Row:
    promise = "a secret file outside the workspace cannot be read"
    script = f"cat '{site.secret}' 2>&1; ls -a '{site.base}' 2>&1; echo RESULT done"
    r = through(engine, script, site.work)
    leaked = site.secret_token in r.text
    detail = ("its content came back" if leaked else f"{site.secret} not readable") if r.ran else why_not(r)
    control = direct(script, site.work)
    return Row("read_secret", promise, r.ran and not leaked,
               "fired" if site.secret_token in control.stdout else "did not fire", detail)


def proc_environ(engine: Any, site: Site) -> Row:
    promise = "no other process's environment (/proc/1/environ, the server's) can be read"
    canary = token("environ")
    decoy = subprocess.Popen(["/bin/sleep", "30"], env={"PATH": "/usr/bin:/bin", "PARISM_SELFTEST_CANARY": canary},
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        script = ("cat /proc/1/environ 2>&1; for f in /proc/[0-9]*/environ; do cat \"$f\"; done 2>/dev/null; "
                  "echo; echo RESULT done")
        r = through(engine, script, site.work)
        leaked = canary in r.text
        detail = ("a host process's environment came back" if leaked else "only the sandbox's own processes seen") \
            if r.ran else why_not(r)
        control = direct(f"cat /proc/{decoy.pid}/environ", site.work)
        fired = canary in control.stdout
    finally:
        decoy.kill()  # the decoy is ours: killed by its own handle
        decoy.wait()
    return Row("proc_environ", promise, r.ran and not leaked, "fired" if fired else "did not fire", detail)


def fork_limit(engine: Any, site: Site, nproc: int) -> Row:
    promise = f"a command cannot fork past sandbox.limits.nproc ({nproc or 'unlimited'})"
    if nproc == 0:
        return Row("fork_limit", promise, False, "none", "sandbox.limits.nproc = 0 sets no process limit")
    cap = nproc + 40
    code = ("import os,signal,time\nkids=[]\n"
            f"for i in range({cap}):\n"
            "    try:\n        pid=os.fork()\n    except OSError:\n        break\n"
            "    if pid==0:\n        time.sleep(5)\n        os._exit(0)\n    kids.append(pid)\n"
            "print(\"RESULT\", len(kids), flush=True)\n"
            "for k in kids:\n    os.kill(k, signal.SIGKILL)\n"
            "for k in kids:\n    os.waitpid(k, 0)\n")
    script = f"{python()} -c '{code}'"
    r = through(engine, script, site.work)
    count = int(r.result) if r.ran and r.result and r.result.isdigit() else None
    held = count is not None and count < nproc
    detail = (f"{count} forks before the limit (of {cap} tried)" if count is not None else why_not(r))
    control = direct(script, site.work)
    fired = f"RESULT {cap}" in control.stdout
    return Row("fork_limit", promise, held, "fired" if fired else "did not fire", detail)


def outlive(engine: Any, site: Site) -> Row:
    promise = "nothing a command starts outlives the call"
    arg = f"{OUTLIVE_S}.{secrets.randbelow(10**6):06d}"
    script = f"setsid /bin/sleep {arg} >/dev/null 2>&1 </dev/null & echo \"RESULT $!\""
    r = through(engine, script, site.work)
    time.sleep(0.5)
    left = _sleepers(arg)
    detail = (f"{len(left)} process(es) left running" if left else "nothing left") if r.ran else why_not(r)
    control = direct(script, site.work)
    deadline = time.monotonic() + 3.0  # the escaped sleep may take a moment to exec after its shell returned
    while not (fired := bool(_sleepers(arg))) and time.monotonic() < deadline:
        time.sleep(0.05)
    started = control.stdout.strip().removeprefix("RESULT ").strip()
    if started.isdigit() and _sleepers(arg, int(started)):  # the control's own sleep: ended by its pid
        try:
            os.kill(int(started), 9)
        except OSError:
            pass
    return Row("outlive_call", promise, r.ran and not left, "fired" if fired else "did not fire", detail)


def _sleepers(arg: str, pid: int | None = None) -> list[int]:
    """Live ``sleep <arg>`` processes (read only: nothing found here is signalled, except the
    control's own sleep, by the pid its shell reported)."""
    found = []
    for name in [str(pid)] if pid is not None else os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if len(cmd) >= 2 and cmd[0].endswith(b"sleep") and cmd[1] == arg.encode() and state != "Z":
            found.append(int(name))
    return found


def unshare_user(engine: Any, site: Site) -> Row:
    promise = "a command cannot create namespaces (unshare -U)"
    script = "unshare -U /bin/true 2>&1 && echo RESULT made || echo RESULT refused"
    r = through(engine, script, site.work)
    held = r.result == "refused"
    detail = ("unshare -U was refused" if held else "a user namespace was created") if r.ran else why_not(r)
    control = direct(script, site.work)
    ctl = "fired" if "RESULT made" in control.stdout else \
        f"unavailable: unshare -U fails on this host too ({control.stdout.strip()[:60]})"
    return Row("unshare_user", promise, held, ctl, detail)


def git_filter(engine: Any, site: Site, git_allowed: bool) -> Row:
    promise = "a repository's configuration cannot make git run a program (filter, fsmonitor)"
    if not git_allowed or shutil.which("git") is None:
        return Row("git_filter", promise, True, "none", "git is not allowed by this profile or not installed",
                   applicable=False)
    canary = token("gitfilter")
    repo = site.work / "repo"
    repo.mkdir(mode=0o755)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(site.base), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": "/dev/null"}
    setup = ("git init -q . && git -c user.name=s -c user.email=s@s commit -q --allow-empty -m0 && "
             "echo data > a.txt && echo '* filter=pwn' > .gitattributes && git add a.txt .gitattributes && "
             "git -c user.name=s -c user.email=s@s commit -q -m1 && "
             f"git config filter.pwn.clean \"sh -c 'echo {canary} >&2; cat'\" && "
             f"git config core.fsmonitor \"echo {canary} >&2; false\" && "
             "echo changed > a.txt && chmod -R a+rX .")
    made = direct(setup, repo, env)
    if made.returncode != 0:
        return Row("git_filter", promise, False, "none", f"could not plant the repository: {made.stderr[:160]}")
    env_ = engine.run("git", ["status", "--porcelain"], cwd=str(repo), timeout_ms=PROBE_TIMEOUT_MS, format="json")
    text = env_.to_json()
    ran = env_.failure is None or env_.failure.kind in ("guard", "exec")
    leaked = canary in text
    how = f"refused by the guard ({env_.failure.reason})" if env_.failure is not None and env_.failure.kind == "guard" \
        else f"git ran (exit {env_.exitCode}), no filter"
    control = direct("git status --porcelain", repo, env)
    fired = canary in control.stderr
    return Row("git_filter", promise, ran and not leaked, "fired" if fired else "did not fire",
               "the filter ran" if leaked else how)


def sandbox_row(status: dict[str, Any]) -> Row:
    promise = "the sandbox is on and complete"
    held = status.get("mode") != "off" and status.get("level") == "full" and bool(status.get("active"))
    detail = f"mode {status.get('mode')}, level {status.get('level')}" + (
        f": {status.get('reason')}" if status.get("reason") else "")
    return Row("sandbox", promise, held, "none", detail)


def network_rows(config_path: str | None) -> list[Row]:
    """The network probes, in a network namespace of the selftest's own (``netns``)."""
    cmd = [sys.executable, "-m", "parism.selftest.netns", json.dumps({"config": config_path})]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)})
    except subprocess.TimeoutExpired:
        return [Row("network", "no command reaches the host's loopback or a metadata address", False, "none",
                    "the network probes did not finish in 90 s")]
    try:
        rows = [Row(**row) for row in json.loads(done.stdout.strip().splitlines()[-1])]
    except (ValueError, IndexError, TypeError):
        return [Row("network", "no command reaches the host's loopback or a metadata address", False, "none",
                    f"the network probes failed: {done.stderr.strip()[-300:]}")]
    return rows


def run_selftest(config_path: str | None = None) -> Report:
    """Every probe, in a private site; the report (``ok``: every applicable promise held)."""
    from parism.config import load_config

    cfg = load_config(config_path)
    if cfg.errors:
        row = Row("configuration", "the configuration is valid", False, "none", cfg.error_message()[:300])
        return Report(False, cfg.profile.name, {}, [row])
    with Site.made() as site:
        pcfg = probe_config(config_path, site.work)
        engine = engine_for(pcfg)
        try:
            status = engine.sandbox.status()
            nproc = int(status.get("limits", {}).get("nproc", 0) or 0)
            rows = [sandbox_row(status)]
            git_allowed = "git" in pcfg.settings.guard.allowed_commands
            probes: list[tuple[str, Callable[[], Row]]] = [
                ("write_outside", lambda: write_outside(engine, site)),
                ("read_secret", lambda: read_secret(engine, site)),
                ("proc_environ", lambda: proc_environ(engine, site)),
                ("fork_limit", lambda: fork_limit(engine, site, nproc)),
                ("outlive_call", lambda: outlive(engine, site)),
                ("unshare_user", lambda: unshare_user(engine, site)),
                ("git_filter", lambda: git_filter(engine, site, git_allowed)),
            ]
            rows += [_safely(name, probe) for name, probe in probes]
        finally:
            engine.close()
        rows += network_rows(config_path)
    ok = all(r.held for r in rows if r.applicable)
    sandbox = {k: status.get(k) for k in ("mode", "level", "uid", "uid_rule")}
    sandbox["identity"] = (status.get("identity") or {}).get("mode")
    return Report(ok, cfg.profile.name, sandbox, rows)


def _safely(name: str, probe: Callable[[], Row]) -> Row:
    """A probe that raised is broken (never skipped)."""
    try:
        return probe()
    except Exception as exc:  # noqa: BLE001 - reported as a broken promise
        return Row(name, "the probe ran to its end", False, "none", f"{type(exc).__name__}: {exc}"[:300])
