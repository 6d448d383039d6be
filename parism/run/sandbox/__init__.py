"""Kernel confinement with bubblewrap: the promise behind the guard (docs/security.md).

Even a command the guard wrongly lets through cannot write outside what its profile allows,
reach the network unless its policy allows it, see the server's secrets, or outlive its call.

``Sandbox.from_config(cfg)`` is cheap; the probe runs once, lazily, on the first ``status`` or
``launcher`` call (server start stays fast) and fixes the level for the process lifetime.
``launcher(request, spec)`` (the guard's frozen :class:`SandboxRequest`) returns a launcher for the executor, ``None`` for a direct spawn
(mode ``off``, or ``auto`` degraded to ``none`` — reported loudly by ``status`` and the log),
or a ``Failure(exec/sandbox_unavailable)`` when ``required`` cannot be honoured.

Modules: plan.py (every input of a call's sandbox, the pool key) → bwrap.py (the argv) →
launcher.py (pre-start + hand-over) → pool.py; identity.py (who runs as); probe.py (levels).
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from parism.run import truth
from parism.wire.envelope import Failure
from parism.run.sandbox import identity
from parism.run.sandbox import network as net
from parism.run.sandbox import plan as planning
from parism.run.sandbox import probe
from parism.run.sandbox.bwrap import shows as bwrap_shows
from parism.run.sandbox.cgroup import pids_root
from parism.run.sandbox.launcher import DevIno, Prepared, SandboxStarted
from parism.run.sandbox.plan import MIB, Plan
from parism.run.sandbox.pool import Pool
from parism.run.sandbox.request import FileCopy, GitPins, SandboxRequest
from parism.run.sandbox.roots import PinnedRoot, pin_roots

if TYPE_CHECKING:
    from parism.config import LoadedConfig
    from parism.config.model import SandboxSettings
    from parism.run.executor import ExecSpec

log = logging.getLogger("parism.run.sandbox")

# Substrings of what tools print when they have no network (curl, git, wget, dig, ping, pip,
# Go and Node clients), checked case-insensitively on stderr of a failed command.
NETWORK_ERRORS = ("could not resolve host", "temporary failure in name resolution",
                  "network is unreachable", "network unreachable", "socket: operation not permitted",
                  "name or service not known", "connection refused", "failed to connect",
                  "couldn't connect to server", "could not resolve hostname", "no such host",
                  "dial tcp", "getaddrinfo", "eai_again", "enotfound", "unable to resolve")


IDENTITY_NOTES = {
    "identity_map": "owners and process users are the host's: each sandbox has the identity uid/gid map",
    "host_correction": ("inside the sandbox only its own uid is mapped; owners and process users the "
                        "kernel shows as nobody are corrected from the host (review.warnings ids_corrected)"),
}


class BwrapLauncher:
    """The executor's ``Launcher`` for one planned call (single use, like its sandbox).

    ``cwd_id``: (st_dev, st_ino) of the working directory the guard checked; the command runs
    only in that directory (the helper proves it at hand-over), whatever its name means now."""

    def __init__(self, plan: Plan, pool: Pool | None, cwd_id: DevIno | None = None) -> None:
        self.plan = plan
        self._pool = pool
        self.cwd_id = cwd_id
        self._prepared: Prepared | None = None

    def shows(self, path: str) -> bool:
        """Whether this sandbox mounts the host's ``path`` (:func:`parism.run.sandbox.bwrap.shows`)."""
        return bwrap_shows(self.plan, path)

    def start(self, spec: ExecSpec) -> SandboxStarted:
        prepared = self._pool.take(self.plan, self.cwd_id) if self._pool else Prepared(self.plan)
        self._prepared = prepared
        return prepared.handover(list(spec.argv), self.cwd_id, getattr(spec, "stdin", None))

    def egress_refusals(self) -> list[str]:
        """What the egress proxy refused this call's command (run/sandbox/network.py)."""
        egress = self._prepared.egress if self._prepared else None
        return egress.refusals() if egress else []


class Sandbox:
    """The sandbox stage of one engine: settings, the probe result (once), the pool."""

    def __init__(self, settings: SandboxSettings | None, allowed_paths: Sequence[str] | None, server_cwd: str, *,
                 pool_size: int = 2, unprivileged_uid: int = identity.NOBODY,
                 roots: tuple[PinnedRoot, ...] | None = None) -> None:
        self.settings = settings
        self.mode: str = planning.setting(settings, "mode", "auto") or "auto"
        self.allowed_paths = allowed_paths
        # the allowed paths as pinned when the configuration loaded (else now): only these
        # inodes are ever bound, and only while unchanged (run/sandbox/roots.py)
        self.roots = roots if roots is not None else pin_roots(allowed_paths or (), unprivileged_uid)
        self.server_cwd = os.path.realpath(server_cwd or os.getcwd())
        self.unprivileged_uid = unprivileged_uid
        self.pool_size = pool_size  # ready sandboxes per plan; 0 = every call starts cold
        self._pool: Pool | None = None
        self._probe: probe.ProbeResult | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, cfg: LoadedConfig, roots: tuple[PinnedRoot, ...] | None = None) -> "Sandbox":
        """No work here beyond reading settings (and pinning the allowed roots, unless the
        engine's are given): the probe waits for first use."""
        return cls(cfg.settings.sandbox, cfg.settings.guard.allowed_paths, cfg.cwd or "", roots=roots)

    def live_roots(self) -> tuple[PinnedRoot, ...]:
        """The pinned allowed roots that are still the directories pinned at start."""
        return tuple(p for p in self.roots if p.changed() is None)

    # -- probe ---------------------------------------------------------------------------

    def probed(self) -> probe.ProbeResult:
        """Run the probe once (thread-safe) and log a degraded result loudly."""
        with self._lock:
            if self._probe is None:
                self._probe = self._run_probe()
                if self.mode != "off" and self._probe.level != "full":
                    log.warning("sandbox level %s (mode %s): %s", self._probe.level, self.mode,
                                self._probe.reason)
            return self._probe

    def _run_probe(self) -> probe.ProbeResult:
        if self.mode == "off":
            return probe.ProbeResult("none", "sandbox.mode is off")
        configured = planning.setting(self.settings, "bwrap_path", "") or ""
        bwrap, python = probe.find_bwrap(configured), probe.find_python()
        features: dict[str, bool] = {}

        def try_level(level: str) -> str | None:
            with tempfile.TemporaryDirectory(prefix="parism-probe-") as tmp:
                os.chmod(tmp, 0o755)
                plan = self._plan(level, features, tmp, network=False, namespace="isolated",
                                  binds=(), overrides=None, env={"PATH": "/usr/bin:/bin"},
                                  timeout_s=5, bwrap=bwrap or "", python=python or "")
                return _run_true(plan)

        if bwrap is not None:
            features.update(probe.bwrap_info(bwrap)[1])
        return probe.run_probe(try_level, bwrap, python, configured)

    # -- plans -----------------------------------------------------------------------------

    def identity_for(self, cwd: str, features: dict[str, bool] | None = None,
                     st: os.stat_result | None = None) -> identity.RunAs:
        """Who a command in ``cwd`` runs as, and whether under the identity map (identity.py);
        ``st``: the directory as the guard opened it."""
        feats = self.probed().features if features is None else features
        return identity.choose(identity.resolved(cwd), self.unprivileged_uid,
                               full_map=bool(feats.get("userns_block_fd")), st=st)

    def _plan(self, level: str, features: dict[str, bool], cwd: str, *, network: bool,
              namespace: str, binds: Sequence[str], overrides: Mapping[str, int] | None, env: dict[str, str],
              timeout_s: float, bwrap: str, python: str, git_dirs: tuple[str, ...] | None = None,
              cwd_stat: os.stat_result | None = None, file_copies: Sequence[FileCopy] = (),
              sealed_dirs: Sequence[str] = (),
              run_as: identity.RunAs | None = None, writable: bool | None = None) -> Plan:
        run_as = run_as or self.identity_for(cwd, features, cwd_stat)
        mask_files, mask_dirs = planning.masks_for(run_as)
        bind_paths = planning.expand_binds(binds, env.get("HOME", ""), run_as)
        limits = planning.limit_values(self.settings, overrides)
        if writable is None:
            writable = bool(planning.setting(self.settings, "writable_project", False))
        git = os.path.join(cwd, ".git")
        if git_dirs is None:  # no guard list (probe, direct callers): the cwd's own .git
            git_dirs = (git,) if os.path.lexists(git) else ()
        egress = network and namespace != "host_net"
        if egress:
            env = {**env, **net.proxy_env()}
        live = self.live_roots()
        ro_paths = planning.safe_ro_paths([p.real for p in live], cwd, run_as)
        if run_as.rule == "root_masked":  # host uid 0 sees only the trees given as root's (at start too)
            private = {p.real for p in live if p.root_private}
            ro_paths = tuple(p for p in ro_paths if p in private and identity.root_private(p, self.unprivileged_uid))
        pinned = {p.real: (p.dev, p.ino) for p in live}
        sealed = tuple(d for d in sealed_dirs or () if planning.in_view(d, cwd, ro_paths))
        git_dirs = tuple(g for g in git_dirs if not planning.below(g, sealed))  # hidden by a seal
        return Plan(
            bwrap=bwrap, level=level, disable_userns=features.get("disable_userns", False),
            python=python, cwd=cwd, writable=writable,
            git_dirs=tuple(git_dirs) if writable else (),
            ro_paths=ro_paths, ro_ids=tuple(pinned.get(p) for p in ro_paths), binds=bind_paths,
            network=network or namespace == "host_net", namespace=namespace,
            tmp_bytes=int(planning.setting(self.settings, "tmp_size_mb", planning.DEFAULT_TMP_MB)) * MIB,
            rlimits=planning.rlimits(limits, timeout_s), oom_score_adj=limits["oom_score_adj"],
            env=planning.sandbox_env(env, bind_paths), run_as=run_as,
            deny_unix_sockets=planning.UNIX_FILTER and not planning.socket_binds(bind_paths),
            mask_files=mask_files, mask_dirs=mask_dirs, egress=egress,
            network_allow=tuple(planning.setting(self.settings, "network_allow", ()) or ()) if egress else (),
            resolvers=net.system_resolvers() if egress else (),
            file_copies=planning.visible_copies(file_copies, cwd, ro_paths, run_as),
            sealed_dirs=sealed,
        )

    def plan(self, request: SandboxRequest, spec: ExecSpec, run_as: identity.RunAs | None = None) -> Plan:
        """The plan of one call: probe result + config + the guard's request + the spec
        (``run_as``: the call's identity, when the caller already chose it)."""
        res = self.probed()
        cwd, cwd_stat = checked_dir(request, spec)
        git: GitPins = request.git
        return self._plan(
            res.level, res.features, cwd, cwd_stat=cwd_stat, network=request.network,
            namespace=request.namespace, binds=request.binds, overrides=request.limits,
            env=dict(spec.env), timeout_s=float(spec.timeout_s), bwrap=res.bwrap or "",
            python=res.python or "", git_dirs=git.dirs, file_copies=git.configs, sealed_dirs=git.sealed,
            run_as=run_as,
        )

    # -- public API --------------------------------------------------------------------------

    def launcher(self, request: SandboxRequest, spec: ExecSpec) -> BwrapLauncher | Failure | None:
        """How to start this call: sandboxed, directly (None), or refused (Failure)."""
        res = self.probed()
        if self.mode == "off":
            return None
        if self.mode == "required" and res.level != "full":
            return Failure(kind="exec", reason="sandbox_unavailable",
                           message=f"sandbox.mode is required but the sandbox level is {res.level}: {res.reason}",
                           hint=unavailable_hint(res.reason))
        if res.level == "none":
            return None
        # one identity per call (its realpath and permission checks cost ~0.1 ms each time):
        # the directory as the guard opened it, as every check below and the plan read it
        cwd, st = checked_dir(request, spec)
        run_as = self.identity_for(cwd, st=st)
        unmet = (self.unmet(request, spec, run_as) or self.uncorrectable(spec, run_as)
                 or self.root_refused(request, spec, run_as))
        if unmet is not None:
            return unmet
        return BwrapLauncher(self.plan(request, spec, run_as), self._shared_pool(), checked_cwd(request))

    def _shared_pool(self) -> Pool | None:
        with self._lock:
            if self._pool is None and self.pool_size > 0:
                self._pool = Pool(per_plan=self.pool_size)
            return self._pool if self.pool_size > 0 else None

    def question_plan(self, cwd: str, st: os.stat_result | None, binds: Sequence[str],
                      env: dict[str, str]) -> Plan | str | None:
        """The sandbox the guard asks git its questions in (guard/git/ask.py): the call's own
        mounts and uid/gid — the plan its command gets, minus the network, the file copies and
        the sealed directories (what the answers decide), read-only.  None: the call's command
        runs unsandboxed, so the questions are asked directly too; a string: why nothing may be
        asked (the command would be refused by ``launcher`` for the same reason)."""
        res = self.probed()
        if self.mode == "off":
            return None
        if self.mode == "required" and res.level != "full":
            return f"sandbox.mode is required but the sandbox level is {res.level}: {res.reason}"
        if res.level == "none":
            return None
        run_as = self.identity_for(cwd, st=st)
        why = self.root_problem(cwd, run_as)
        if why is not None:
            return f"the working directory would run git as the host's uid 0: {why}"
        return self._plan(res.level, res.features, cwd, cwd_stat=st, network=False, namespace="isolated",
                          binds=binds, overrides=None, env=env, timeout_s=30, bwrap=res.bwrap or "",
                          python=res.python or "", file_copies=(), sealed_dirs=(), run_as=run_as,
                          writable=False)

    def question_launcher(self, plan: Plan, st: os.stat_result | None) -> BwrapLauncher:
        """A launcher of ``plan`` (pooled like the commands'), in the directory the guard opened."""
        return BwrapLauncher(plan, self._shared_pool(), (st.st_dev, st.st_ino) if st is not None else None)

    def unmet(self, request: SandboxRequest, spec: ExecSpec, run_as: identity.RunAs | None = None) -> Failure | None:
        """A command whose required binds the sandbox cannot give is refused before it runs:
        it could only fail, or worse, succeed with nothing (apt list without dpkg's status)."""
        required = request.requires
        if not required:
            return None
        why = planning.unmet_requirements(required, dict(spec.env).get("HOME", ""),
                                          run_as or self.identity_for(spec.cwd))
        if not why:
            return None
        cmd = os.path.basename(spec.argv[0]) if spec.argv else "the command"
        return Failure(kind="exec", reason="sandbox_unsupported",
                       message=f"{cmd} cannot work inside the sandbox: {'; '.join(why)}",
                       hint=f"make {', '.join(required)} readable by the sandbox user, or run {cmd} "
                            "where the sandbox is off (sandbox.mode = \"off\")")

    def root_problem(self, cwd: str, run_as: identity.RunAs) -> str | None:
        """identity.root_masked_problem for a call in ``cwd`` run as ``run_as`` (the command's
        and the guard's git questions alike)."""
        # only a root that was root's private tree when the configuration loaded, and still is the same
        allowed = tuple(p.real for p in self.live_roots() if p.root_private)
        return identity.root_masked_problem(
            run_as, cwd, allowed, unprivileged_uid=self.unprivileged_uid,
            writable=bool(planning.setting(self.settings, "writable_project", False)))

    def root_refused(self, request: SandboxRequest, spec: ExecSpec,
                     run_as: identity.RunAs | None = None) -> Failure | None:
        """A call that would keep host uid 0 (``root_masked``) in a workspace the caller may
        control, or writing its project, is refused (identity.root_masked_problem)."""
        cwd, st = checked_dir(request, spec)
        why = self.root_problem(cwd, run_as or self.identity_for(cwd, st=st))
        if why is None:
            return None
        return Failure(kind="exec", reason="sandbox_unsupported",
                       message=f"the working directory would run the command as the host's uid 0: {why}",
                       hint=(f"make the directory listable by uid {self.unprivileged_uid} (chmod o+rx on it and "
                             "its parents), give it to the user whose files these are (chown), or name "
                             "root's private tree itself in guard.allowed_paths (read-only profile)"))

    def uncorrectable(self, spec: ExecSpec, run_as: identity.RunAs | None = None) -> Failure | None:
        """Under host correction, a call whose owners the command itself compared or formatted
        (``find -user``, ``ps -u``, ``stat -c %U``) could only answer wrongly: refused."""
        if not spec.argv or (run_as or self.identity_for(spec.cwd)).route != "host_correction":
            return None
        why = truth.uncorrectable(spec.argv[0], list(spec.argv[1:]))
        if why is None:
            return None
        return Failure(kind="exec", reason="sandbox_unsupported",
                       message=f"{why}, and this sandbox maps only the server's uid: every other owner is "
                               "nobody to the command, so the answer would be wrong",
                       hint=truth.hint(spec.argv[0]))

    def review(self, request: SandboxRequest, launcher: object = None) -> dict[str, Any]:
        """``review.sandbox`` of one call: {level, namespace_class, network}."""
        level = launcher.plan.effective_level if isinstance(launcher, BwrapLauncher) else "none"
        return {"level": level, "namespace_class": request.namespace,
                "network": request.network_reachable or level == "none"}

    def status(self) -> dict[str, Any]:
        """``describe.sandbox`` (spec decision 13)."""
        res = self.probed()
        run_as = self.identity_for(self.server_cwd)
        limits = planning.limit_values(self.settings)
        active = self.mode != "off" and res.level != "none"
        return {
            "engine": "bwrap", "version": res.version, "mode": self.mode, "level": res.level,
            "active": active, "reason": res.reason,
            "features": {**res.features, "pid_namespace": res.level == "full",
                         "unix_socket_filter": active and planning.UNIX_FILTER,
                         "uid0_pids_cgroup": active and os.geteuid() == 0 and pids_root() is not None,
                         "net_isolation": active, "egress_proxy": active, "pool": self.pool_size > 0 and active},
            "limits": {**limits, "tmp_size_mb": int(planning.setting(self.settings, "tmp_size_mb",
                                                                   planning.DEFAULT_TMP_MB))},
            "uid": run_as.uid if active else os.geteuid(), "uid_rule": run_as.rule if active else None,
            "identity": {"mode": run_as.route if active else "unsandboxed", "rule": run_as.rule if active else None},
            "bwrap_path": res.bwrap, "helper": res.python,
            "notes": [IDENTITY_NOTES[run_as.route]] if active else [],
        }

    def close(self) -> None:
        """Kill pre-started sandboxes (server shutdown)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()


def checked_dir(request: SandboxRequest, spec: ExecSpec) -> tuple[str, os.stat_result | None]:
    """The working directory and its status as the guard opened it (``SandboxRequest.opened``:
    not resolved again), else the spec's, resolved here."""
    opened = request.opened
    cwd = spec.cwd if spec.cwd in opened else identity.resolved(spec.cwd)
    return cwd, opened.get(cwd)


def checked_cwd(request: SandboxRequest) -> DevIno | None:
    """(st_dev, st_ino) of the working directory as the guard opened it (``SandboxRequest.opened``)."""
    st = request.opened_cwd()
    return (st.st_dev, st.st_ino) if st is not None else None


def egress_refusals(launcher: object) -> list[str]:
    """The egress proxy's refusals during a call (empty unless it ran sandboxed with network)."""
    return launcher.egress_refusals() if isinstance(launcher, BwrapLauncher) else []


def network_hint(cmd: str, network_allowed: bool, exit_code: int | None, stderr: str,
                 refused: list[str] | None = None) -> str | None:
    """Spec decision 13: a failure that looks like a denied network gets a hint naming the policy;
    one after the egress proxy refused a destination names that refusal."""
    if refused and exit_code:
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        return f"the egress proxy refused: {refused[0]}{more}"
    if network_allowed or not exit_code:
        return None
    text = stderr.lower()
    if any(s in text for s in NETWORK_ERRORS):
        return f"network disabled by policy for {cmd}"
    return None


def _run_true(plan: Plan) -> str | None:
    """Start a sandbox of ``plan`` and run /usr/bin/true in it: None on success, else stderr."""
    try:
        started = Prepared(plan).handover(["/usr/bin/true"])
    except OSError as exc:
        return str(exc)
    code = started.wait(probe.PROBE_TIMEOUT_S)
    err = started.stderr.read().decode("utf-8", "replace") if code is not None else "probe timed out"
    started.kill_tree()
    started.stdout.close()
    started.stderr.close()
    return None if code == 0 else (err or f"exit status {code}")


__all__ = ["BwrapLauncher", "GitPins", "Sandbox", "SandboxRequest", "egress_refusals", "network_hint"]


def unavailable_hint(reason: str | None) -> str:
    """What fixes the probe's failure: the container flags when the reason names them, else the
    host-side remedy. ``auto`` is mentioned last: it runs commands unconfined."""
    r = reason or ""
    if "seccomp" in r or "systempaths" in r:
        return ("run the container with Parism's seccomp profile and --security-opt systempaths=unconfined "
                "(docs/container.md), or set sandbox.mode = \"auto\" to run without confinement")
    if "AppArmor" in r:
        return ("allow user namespaces for bwrap (AppArmor profile or sysctl), or set sandbox.mode = \"auto\" "
                "to run without confinement")
    return ("install bubblewrap and allow unprivileged user namespaces, or set sandbox.mode = \"auto\" "
            "to run without confinement")
