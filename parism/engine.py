"""The engine: one call through guard → sandbox → executor → redactor → parser → shaper → audit.

Stable API (the MCP server and the CLI only serialise these results with ``to_wire()``):

    create_engine(config_path: str | None = None) -> Engine
    Engine.run(cmd, args=None, cwd=None, **options) -> Envelope      options: RunOptions' fields
    Engine.run_paged(cmd, args=None, cwd=None, **options) -> Envelope options: PagedOptions' fields
    Engine.call(opts) / await Engine.acall(opts)   one typed entry: dispatch on the options model
    Engine.describe(cmd=None) -> DescribeResult
    Engine.dry_run(cmd, args=None, cwd=None) -> DryRunResult
    Engine.parse_output(cmd, args, raw, os=None, format=None) -> Envelope
    Engine.close() -> None        release the sandbox pool (server shutdown)
    await Engine.arun(...)        same parameters as run, cancellable
    await Engine.arun_paged(...)  same parameters as run_paged, cancellable

Every keyword goes through :func:`parism.wire.options.build`: an unknown parameter, a wrong type or a
value out of range answers ``config/invalid_request`` naming it, and nothing runs.
``format=None`` means "not chosen": the adaptive format may compact (contract §6.4); an explicit
``"json"`` is honoured as is. Nothing here raises for bad input or a failing command: every
outcome is an envelope. This module orchestrates only; each stage lives in its own module
(``guard``, ``sandbox``, ``executor``, ``redact``, ``parsers``, ``shape``, ``results``,
``paging``, ``describe``, ``audit``).

Async calls run the whole pipeline in a worker thread (so ``describe`` answers while a long
command runs); on cancellation the cancel token is set and the caller waits, shielded, until
the child's process tree is dead (mcp-notes §1.10).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import anyio

from parism import guard as guard_mod
from parism.run import memlimit
from parism.guard import Decision
from parism.audit import AuditLog
from parism.availability import availability
from parism.run.childenv import ChildEnv, build_child_env
from parism.config import LoadedConfig, load_config
from parism.describe import CallStats, describe_command, describe_host
from parism.wire.envelope import (
    Availability,
    CacheInfo,
    CompareResult,
    DescribeResult,
    DryRunResult,
    Envelope,
    ExplainResult,
    Failure,
    PageInfo,
)
from parism.run.executor import CancelToken, DirectLauncher, ExecSpec, Launcher, Slots, SpawnError, execute, resolve_binary
from parism.run.fsdiff import diff, snapshot
from parism.wire.options import (
    CompareOptions,
    ExplainOptions,
    FetchOptions,
    JobIdOptions,
    JobOutputOptions,
    JobStartOptions,
    JobStopOptions,
    OptionsError,
    PagedOptions,
    RunOptions,
    StrictOptions,
    build,
)
from parism.output.paging import PageCache, page_of
from parism.packs.table import PackTable
from parism.parsers import registry
from parism.parsers.osinfo import host_os
from parism.pipeline import HARD_CAP, Finisher, Ran, Request, policy_hash
from parism.output.redact import Redactor
from parism.output.envelopes import bounded, bounded_dry_run, no_process
from parism.run.sandbox import BwrapLauncher, Sandbox
from parism.run.sandbox.identity import lister, readable_by_calls
from parism.run.sandbox.request import SandboxRequest
from parism.run.sandbox.roots import pin_roots
from parism.output.shape import FORMATS
from parism.results.service import Results

PAGED_CAPTURE = 10 * 1024 * 1024  # run_paged keeps the whole output up to this (v1's buffer)
NO_TIMEOUT_S = 3600.0  # timeout_ms = 0
CANCEL_WAIT_S = 10.0
T = TypeVar("T")
O = TypeVar("O", bound=StrictOptions)


@dataclass
class PreparedCall:
    req: Request
    decision: Decision
    request: SandboxRequest  # what the sandbox was told (the guard's frozen record)
    spec: ExecSpec
    launcher: Launcher
    guard_ms: float


class Engine:
    def __init__(self, cfg: LoadedConfig) -> None:
        self.cfg = cfg
        # the allowed roots, resolved once here and held by descriptor: the guard and the
        # sandbox use these, never a later resolution of the names (run/sandbox/roots.py)
        self.roots = pin_roots(cfg.settings.guard.allowed_paths)
        self.redactor = Redactor.from_config(cfg)
        self.sandbox = Sandbox.from_config(cfg, roots=self.roots)
        self.audit = AuditLog.from_config(cfg)
        self.child_env: ChildEnv = build_child_env(cfg, os.environ)
        self.memory = memlimit.budget(cfg.settings.guard)  # max_concurrency checked against memory.max
        self.slots = Slots(self.memory.effective)
        self.job_slots = Slots(cfg.settings.server.max_jobs)  # jobs never wait for run's slots
        self.pages = PageCache()
        self.os = host_os()
        self.errors = [str(p) for p in cfg.errors] + self.redactor.problems()
        if self.child_env.zone_problem is not None:  # the caller's TZ: docs/envelope.md, "Time rule"
            self.errors.append(self.child_env.zone_problem)
        self.packs = PackTable(cfg, frozenset(registry.catalog()))  # this engine's own parser packs
        self.results = Results(cfg.settings, self.child_env.env, self.os, policy_hash(cfg))
        self.finisher = Finisher(cfg, self.redactor, self.sandbox, self.os, self.packs, self.results,
                                 zone=self.child_env.zone)
        self._probe_cwd = _probe_cwd(cfg)
        self._guard_setup = guard_mod.Setup(cfg, self.sandbox, roots=self.roots)  # git's questions: in the call's sandbox
        self.stats = CallStats(cfg.settings.guard.allowed_commands) if cfg.settings.telemetry.enabled else None
        from parism.jobs import JobTable

        self.jobs = JobTable(self, Request.of)

    # -- public, sync -----------------------------------------------------------------

    def run(self, cmd: str, args: list[str] | None = None, cwd: str | None = None, **options: object) -> Envelope:
        opts = self._options(RunOptions, "run", cmd, args, cwd, options)
        return opts if isinstance(opts, Envelope) else self.call(opts)

    def run_paged(self, cmd: str, args: list[str] | None = None, cwd: str | None = None,
                  **options: object) -> Envelope:
        opts = self._options(PagedOptions, "run_paged", cmd, args, cwd, options)
        return opts if isinstance(opts, Envelope) else self.call(opts)

    def call(self, opts: StrictOptions) -> Any:
        """The one typed entry of every surface: run the call ``opts`` describes."""
        return self.handler(opts)(CancelToken())

    def describe(self, cmd: str | None = None) -> DescribeResult:
        if cmd is None:
            return describe_host(self.cfg, os_name=self.os, sandbox=self.sandbox.status(),
                                 regex=self.redactor.report(), errors=self.errors,
                                 env={"passed": sorted(self.child_env.env), "stripped": self.child_env.stripped},
                                 stats=self.stats, packs=self.packs.describe(), pack_parsers=self.packs,
                                 memory=self.memory.report())
        return describe_command(cmd, self.cfg, self.os, self._passes, self.stats, self.packs)

    def dry_run(self, cmd: str, args: list[str] | None = None, cwd: str | None = None) -> DryRunResult:
        req = Request("dry_run", cmd, list(args or []), cwd)
        if self.errors:
            self._audit(req, "error", "invalid_config", None, 0)
            return DryRunResult(would_pass=False, reason="invalid_config", message=self._config_message())
        decision = guard_mod.check(cmd, req.args, cwd, self.cfg, self._guard_setup)
        if decision.allowed:
            self._audit(req, "allowed", None, None, 0)
            return DryRunResult(would_pass=True)
        f = self._guard_failure(decision, req)
        self._audit(req, "blocked", f.reason, None, 0)
        return bounded_dry_run(DryRunResult(would_pass=False, reason=f.reason, message=f.message, hint=f.hint))

    def parse_output(self, cmd: str, args: list[str], raw: str, os: str | None = None,
                     format: str | None = None) -> Envelope:
        """Parse saved output (``parism parse``): no guard, nothing executed."""
        req = Request("parse", cmd, list(args or []), None, format)
        bad = self._bad_request(req)
        if bad is not None:
            return self._echo_masked(req, bad)
        return self._echo_masked(req, self.finisher.parse_saved(req, raw, os))

    # -- the result tools (read-only: nothing is executed) --------------------------------

    def fetch_result(self, result_id: str, cursor: str) -> Envelope:
        """The next page of a retained result that a budget or ``max_items`` cut (contract
        §12.3): from the stored copy, never re-running; ``continuation.cursor`` is absent on
        the last page."""
        opts = build(FetchOptions, {"result_id": result_id, "cursor": cursor})
        if isinstance(opts, OptionsError):
            return self._request_error(Request("fetch_result", "", [], None), opts.text())
        return self._call_fetch(opts, CancelToken())

    def explain_result(self, result_id: str, pointer: str) -> ExplainResult:
        """Where the value at ``pointer`` (RFC 6901, into ``stdout.parsed``) of a retained
        result came from in its masked raw text (contract §4.4)."""
        return self.results.explain(result_id, pointer)

    def compare_results(self, base_id: str, current_id: str, keys: list[str] | None = None,
                        ignore_fields: list[str] | None = None, strict: bool = False) -> CompareResult:
        """What changed between two retained results (contract §15)."""
        return self.results.compare(base_id, current_id, keys, ignore_fields, strict)

    def close(self) -> None:
        """Release what the engine holds between calls (the running jobs, killed; the sandbox's
        pool, the pack workers)."""
        self.jobs.close()
        self.sandbox.close()
        self.packs.close()

    # -- public, async ----------------------------------------------------------------

    async def arun(self, cmd: str, args: list[str] | None = None, cwd: str | None = None,
                   **options: object) -> Envelope:
        opts = self._options(RunOptions, "run", cmd, args, cwd, options)
        return opts if isinstance(opts, Envelope) else await self.acall(opts)

    async def arun_paged(self, cmd: str, args: list[str] | None = None, cwd: str | None = None,
                         **options: object) -> Envelope:
        opts = self._options(PagedOptions, "run_paged", cmd, args, cwd, options)
        return opts if isinstance(opts, Envelope) else await self.acall(opts)

    async def acall(self, opts: StrictOptions) -> Any:
        """``call`` in a worker thread, cancellable (the MCP server's path)."""
        return await _in_thread(self.handler(opts))

    # -- dispatch -----------------------------------------------------------------------

    def handler(self, opts: StrictOptions) -> Callable[[CancelToken], Any]:
        """The engine method serving ``opts``' model (``CALLS``), bound to ``opts``: what
        ``call`` runs, and what the MCP server's early start runs in its own worker
        (:mod:`parism.server.early`)."""
        name = CALLS.get(type(opts))
        if name is None:
            raise TypeError(f"Engine.call takes one of {', '.join(m.__name__ for m in CALLS)}, "
                            f"not {type(opts).__name__}")
        method = getattr(self, name)
        return lambda cancel: method(opts, cancel)

    def _call_run(self, opts: RunOptions, cancel: CancelToken) -> Envelope:
        req = Request.of("run", opts)
        return self._echo_masked(req, self._run(req, cancel))

    def _call_paged(self, opts: PagedOptions, cancel: CancelToken) -> Envelope:
        req = Request.of("run_paged", opts)
        return self._echo_masked(req, self._run_paged(req, opts.page, opts.page_size, cancel))

    def _call_fetch(self, opts: FetchOptions, cancel: CancelToken) -> Envelope:
        return self.results.fetch(opts.result_id, opts.cursor, self.cfg.settings.guard.max_items)

    def _call_explain(self, opts: ExplainOptions, cancel: CancelToken) -> ExplainResult:
        return self.explain_result(opts.result_id, opts.pointer)

    def _call_compare(self, opts: CompareOptions, cancel: CancelToken) -> CompareResult:
        return self.compare_results(opts.base_id, opts.current_id, opts.keys, opts.ignore_fields, opts.strict)

    def _call_job_start(self, opts: JobStartOptions, cancel: CancelToken) -> Any:
        return self.jobs.start(opts)

    def _call_job_status(self, opts: JobIdOptions, cancel: CancelToken) -> Any:
        return self.jobs.status(opts.job_id)

    def _call_job_stop(self, opts: JobStopOptions, cancel: CancelToken) -> Any:
        return self.jobs.stop(opts.job_id)

    def _call_job_output(self, opts: JobOutputOptions, cancel: CancelToken) -> Any:
        return self.jobs.output(opts)

    def _options(self, model: type[O], tool: str, cmd: object, args: object, cwd: object,
                 options: dict[str, object]) -> O | Envelope:
        """The call's options model, or the envelope refusing it (nothing runs)."""
        raw = {"cmd": cmd, **({} if args is None else {"args": args}), "cwd": cwd, **options}
        opts = build(model, raw)
        if not isinstance(opts, OptionsError):
            return opts
        req = Request(tool, str(cmd), [str(a) for a in args] if isinstance(args, list) else [],
                      str(cwd) if cwd else None)
        refused = self._config_refusal(req)
        return refused if refused is not None else self._request_error(req, opts.text())

    # -- pipeline -----------------------------------------------------------------------

    def _run(self, req: Request, cancel: CancelToken) -> Envelope:
        prep = self._prepare(req)
        if isinstance(prep, Envelope):
            return prep
        return self._run_prepared(prep, cancel)

    def _run_prepared(self, prep: PreparedCall, cancel: CancelToken) -> Envelope:
        """A prepared call to its envelope (``run``; a job's thread, parism/jobs.py)."""
        req = prep.req
        early = self.finisher.early_refusal(req)
        if early is not None:
            return self._no_process(req, prep.decision.cwd, early)
        ran = self._execute(prep, cancel, self._stdout_cap())
        if isinstance(ran, Envelope):
            return ran
        env = self.finisher.run_envelope(ran)
        self._audit(req, "allowed", audit_reason(env), env.exitCode, env.duration_ms)
        return env

    def _run_paged(self, req: Request, page: int, page_size: int | None, cancel: CancelToken) -> Envelope:
        guard = self.cfg.settings.guard
        size = guard.default_page_size if page_size is None else page_size
        if size > guard.max_page_size:
            return self._request_error(
                req, f"parameter 'page_size' must be between 1 and {guard.max_page_size} "
                     f"(guard.max_page_size), got {size}")
        prep = self._prepare(req)
        if isinstance(prep, Envelope):
            return prep
        key = (req.cmd, tuple(req.args), prep.decision.cwd, self.finisher.policy_hash)
        hit = None if req.include_diff else self.pages.get(key)
        if hit is not None:
            ran, age_ms = hit
            cache = CacheInfo(hit=True, age_ms=age_ms)
        else:
            ran = self._execute(prep, cancel, PAGED_CAPTURE)
            if isinstance(ran, Envelope):
                return ran
            why = ran.not_cacheable() or ("includeDiff" if req.include_diff else None)
            if why is None and not self.pages.put(key, ran, ran.size()):
                why = "too_large"
            cache = CacheInfo(hit=False, age_ms=0, reason=f"not_cached:{why}" if why else None)
        byte_cap = guard.max_output_bytes or HARD_CAP
        pg = page_of(ran.stdout_text, page, size, byte_cap)
        env = self.finisher.page_envelope(ran, pg, PageInfo(
            page=page, page_size=size, total_lines=pg.total_lines, has_next=pg.has_next, cache=cache),
            byte_cap)
        self._audit(req, "allowed", audit_reason(env), env.exitCode, env.duration_ms)
        return env

    def _prepare(self, req: Request) -> PreparedCall | Envelope:
        """Config errors → guard → binary lookup → sandbox launcher (the request is already a
        validated options model)."""
        bad = self._config_refusal(req)
        if bad is not None:
            return bad
        timeout_ms = self._timeout_ms(req)
        if isinstance(timeout_ms, Envelope):
            return timeout_ms
        req.timeout_ms = timeout_ms
        stdin = self._stdin(req)
        if isinstance(stdin, Envelope):
            return stdin
        t0 = time.monotonic()
        decision = guard_mod.check(req.cmd, req.args, req.cwd, self.cfg, self._guard_setup)
        guard_ms = (time.monotonic() - t0) * 1000
        if not decision.allowed:
            cwd = decision.cwd or (req.cwd or self.cfg.cwd)
            failure = self._guard_failure(decision, req, cwd)
            self._audit(req, "blocked", failure.reason, None, 0)
            return no_process(req.cmd, self.finisher.echo(req).args(), cwd, failure, guard=True)
        env = self.child_env.env
        binary = resolve_binary(req.cmd, env.get("PATH", ""))
        if isinstance(binary, SpawnError):
            return self._no_process(req, decision.cwd, self._spawn_failure(req.cmd, binary, decision.cwd))
        spec = ExecSpec(argv=[binary, *decision.exec_args], cwd=decision.cwd, env=dict(env),
                        timeout_s=timeout_ms / 1000,
                        max_stdout=self._stdout_cap(),
                        max_stderr=self.cfg.settings.guard.max_stderr_bytes or HARD_CAP, stdin=stdin)
        request = decision.request
        assert request is not None  # an allowed decision carries its record (guard.check)
        launcher = self.sandbox.launcher(request, spec)
        if isinstance(launcher, Failure):
            return self._no_process(req, decision.cwd, launcher)
        shows = getattr(launcher, "shows", None)  # BwrapLauncher: what its sandbox mounts
        if shows is not None and not shows(os.path.realpath(binary)):
            # a PATH entry the sandbox does not mount: the first copy it does mount, else say where it is
            inside = resolve_binary(req.cmd, env.get("PATH", ""), shown=shows)
            if isinstance(inside, SpawnError):
                return self._no_process(req, decision.cwd, self._spawn_failure(req.cmd, inside, decision.cwd))
            spec = replace(spec, argv=[inside, *spec.argv[1:]])
        return PreparedCall(req, decision, request, spec, launcher or DirectLauncher(), guard_ms)

    def _execute(self, prep: PreparedCall, cancel: CancelToken, stdout_cap: int) -> Ran | Envelope:
        spec = replace(prep.spec, max_stdout=stdout_cap)
        # includeDiff walks as the server: only what the call's own uid may list (fsdiff.py)
        may_list = lister(prep.launcher.plan.run_as) if isinstance(prep.launcher, BwrapLauncher) else None
        before = snapshot(spec.cwd, may_list=may_list) if prep.req.include_diff else None
        slots = self.job_slots if prep.req.tool == "job_start" else self.slots
        with slots.hold(cancel) as held:
            if not held:
                return self._no_process(prep.req, spec.cwd, Failure(
                    kind="exec", reason="cancelled", message="cancelled while waiting for an execution slot"))
            cap = execute(spec, prep.launcher, cancel)
        if cap.spawn_error is not None:
            return self._no_process(prep.req, spec.cwd, self._spawn_failure(prep.req.cmd, cap.spawn_error, spec.cwd))
        fs = diff(before, snapshot(spec.cwd, may_list=may_list)) if before is not None else None
        return self.finisher.redact(prep.req, prep.decision, prep.launcher, cap, fs, prep.guard_ms, stdout_cap)

    # -- helpers --------------------------------------------------------------------------

    def _stdin(self, req: Request) -> bytes | None | Envelope:
        """The call's ``stdin`` as bytes (None: /dev/null), refused above ``guard.max_stdin_bytes``
        naming the bound (its size is told, never its text)."""
        text = getattr(req.opts, "stdin", None)
        if text is None:
            return None
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone surrogate (JSON "\ud800"): not text, not guessed at
            return self._request_error(
                req, f"parameter 'stdin' is not valid Unicode text (a lone surrogate at character {exc.start})")
        bound = self.cfg.settings.guard.max_stdin_bytes
        if len(data) > bound:
            return self._request_error(
                req, f"parameter 'stdin' is {len(data)} bytes: more than guard.max_stdin_bytes ({bound})")
        return data

    def _timeout_ms(self, req: Request) -> int | Envelope:
        """The call's timeout: its own ``timeout_ms`` (refused above ``guard.max_timeout_ms``,
        naming the bound) or ``guard.timeout_ms`` (0: unlimited), either way at most the bound."""
        guard = self.cfg.settings.guard
        asked = getattr(req.opts, "timeout_ms", None)
        if asked is None:
            return min(guard.timeout_ms or int(NO_TIMEOUT_S * 1000), guard.max_timeout_ms)
        if asked > guard.max_timeout_ms:
            return self._request_error(
                req, f"parameter 'timeout_ms' must be at most {guard.max_timeout_ms} (guard.max_timeout_ms), "
                     f"got {asked}")
        return int(asked)

    def _config_refusal(self, req: Request) -> Envelope | None:
        """An unusable configuration refuses every call (spec decision 12)."""
        if not self.errors:
            return None
        failure = Failure(kind="config", reason="invalid_config", message=self._config_message())
        self._audit(req, "error", "invalid_config", None, 0)
        return no_process(str(req.cmd), [str(a) for a in req.args], str(req.cwd or self.cfg.cwd), failure)

    def _bad_request(self, req: Request) -> Envelope | None:
        """``parse_output``'s checks (its parameters are not an options model)."""
        bad = self._config_refusal(req)
        if bad is not None:
            return bad
        if not isinstance(req.cmd, str) or not req.cmd or not all(isinstance(a, str) for a in req.args):
            return self._request_error(req, "cmd must be a non-empty string and args a list of strings")
        if req.cwd is not None and not isinstance(req.cwd, str):
            return self._request_error(req, "cwd must be a string")
        if req.format is not None and req.format not in FORMATS:
            return self._request_error(req, f"format must be one of {', '.join(FORMATS)}")
        return None

    def _request_error(self, req: Request, message: str) -> Envelope:
        failure = Failure(kind="config", reason="invalid_request", message=message)
        self._audit(req, "error", "invalid_request", None, 0)
        return no_process(str(req.cmd), [str(a) for a in req.args], str(req.cwd or self.cfg.cwd), failure)

    def _no_process(self, req: Request, cwd: str, failure: Failure) -> Envelope:
        echo = self.finisher.echo(req, cwd)
        failure = echo.failure(failure)
        self._audit(req, "allowed", failure.reason, None, 0)
        return no_process(req.cmd, echo.args(), cwd, failure)

    def _guard_failure(self, decision: Decision, req: Request, cwd: str = "") -> Failure:
        """The guard's refusal with its echoes (message, hint) masked."""
        f = decision.failure or Failure(kind="guard", reason="arg_not_allowed", message="refused by the guard")
        return self.finisher.echo(req, cwd).failure(f)

    def _spawn_failure(self, cmd: str, err: SpawnError, cwd: str) -> Failure:
        if err.target == "unmounted":  # installed, outside the sandbox: no package to install
            return Failure(kind="exec", reason="spawn_failed", message=err.message, errorCode=err.code,
                           hint="install it under /usr, or put its directory in guard.allowed_paths or the "
                                "command's sandbox binds (docs/security.md)",
                           availability=Availability(status="present"))
        if err.target != "binary" or err.code not in ("ENOENT", "EACCES"):
            return Failure(kind="exec", reason="spawn_failed", message=err.message, errorCode=err.code)
        status = "not_executable" if err.code == "EACCES" else "missing"
        return Failure(kind="exec", reason="spawn_failed", message=err.message, errorCode=err.code,
                       availability=availability(cmd, status, lambda c, a: self._usable(c, a, cwd)))

    def _passes(self, cmd: str, args: list[str], cwd: str | None = None) -> bool:
        """Would the live guard run this? Without a cwd, judged from a directory the guard
        accepts (the server's cwd when allowed, else the first allowed path), so a server
        started outside its allowed paths still shows its examples."""
        return guard_mod.check(cmd, list(args), cwd or self._probe_cwd, self.cfg, self._guard_setup).allowed

    def _usable(self, cmd: str, args: list[str], cwd: str) -> bool:
        return self._passes(cmd, args, cwd) and isinstance(resolve_binary(cmd, self.child_env.env.get("PATH", "")), str)

    def _echo_masked(self, req: Request, env: Envelope) -> Envelope:
        """The envelope's own echoes of the request (``cmd``, ``cwd``) masked like its messages:
        a token typed as the command name or inside a path must not come back."""
        echo = self.finisher.echo(req, env.cwd)
        cmd, cwd = echo.text(env.cmd), echo.text(env.cwd)
        if cmd != env.cmd or cwd != env.cwd:  # usually nothing is masked: no copy then
            env = env.model_copy(update={"cmd": cmd, "cwd": cwd})
        return bounded(env)

    def _config_message(self) -> str:
        return "invalid configuration: " + "; ".join(self.errors)

    def _stdout_cap(self) -> int:
        return self.cfg.settings.guard.max_output_bytes or HARD_CAP

    def _audit(self, req: Request, decision: str, reason: str | None, exit_code: int | None,
               duration_ms: int) -> None:
        if self.stats is not None and req.tool in ("run", "run_paged"):
            self.stats.record(str(req.cmd), decision, reason, exit_code, duration_ms)
        if not self.audit.enabled:  # the default: no line, so nothing to mask either
            return
        echo = self.finisher.echo(req)
        self.audit.record(tool=req.tool, cmd=echo.text(str(req.cmd)), args=echo.args(),
                          cwd=echo.text(str(req.cwd or self.cfg.cwd)),
                          decision=decision, reason=reason, exit_code=exit_code, duration_ms=duration_ms)


def _probe_cwd(cfg: LoadedConfig) -> str:
    roots = [os.path.realpath(p) for p in cfg.settings.guard.allowed_paths or [] if os.path.isdir(p)]
    here = os.path.realpath(cfg.cwd or os.getcwd())
    if not roots or any(os.path.commonpath([here, r]) == r for r in roots):
        return here
    return roots[0]


#: Options model → the engine method that serves it (``Engine.call``); the result tools add theirs.
CALLS: dict[type[StrictOptions], str] = {
    RunOptions: "_call_run", PagedOptions: "_call_paged",
    FetchOptions: "_call_fetch", ExplainOptions: "_call_explain", CompareOptions: "_call_compare",
    JobStartOptions: "_call_job_start", JobIdOptions: "_call_job_status", JobOutputOptions: "_call_job_output",
    JobStopOptions: "_call_job_stop",
}


async def _in_thread(fn: Callable[[CancelToken], T]) -> T:
    """Run ``fn`` in a worker thread; on cancellation set the token and wait for the tree to die."""
    token = CancelToken()
    done = threading.Event()

    def work() -> T:
        try:
            return fn(token)
        finally:
            done.set()

    try:
        return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        token.cancel()
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(done.wait, CANCEL_WAIT_S)
        raise


def create_engine(config_path: str | None = None) -> Engine:
    """Load the configuration layers (or only ``config_path``) and build an engine. Never raises
    for a bad configuration: the engine then answers ``config/invalid_config``."""
    return Engine(load_config(config_path, project_access=readable_by_calls))


def audit_reason(env: Envelope) -> str | None:
    """The audit line's reason: the failure's, else a parse problem's (``parser_not_found``)."""
    if env.failure is not None:
        return env.failure.reason
    problem = env.stdout.parse_error if env.stdout is not None else None
    return problem.reason if problem is not None else None
