"""After the process: decode → redact → parse → shape → envelope (contract §5, §7, spec decision 1).

Why here and not in the engine: these steps are the same for ``run``, ``run_paged`` and
``parse_output`` (saved text), and they are pure given their inputs — the engine only decides
which of them apply. Rules kept in one place (docs/envelope.md):

- parsers only ever see masked text (redact before parse);
- an exec failure is never replaced by a parse problem: the parse problem stays in
  ``stdout.parse_error``;
- the stdout of a failed command is parsed only when its exit is informative (grep 1 = no
  match), or when we stopped it at the output cap (then up to its last complete line);
- ``raw`` is dropped (``json-no-raw``, adaptive) only when a parsed value replaces it.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from parism.wire.clip import clip
from parism.wire.envelope import (
    Continuation,
    Envelope,
    Failure,
    FsDiff,
    Note,
    Omission,
    OutputField,
    PageInfo,
    ParseError,
    Review,
    SandboxReview,
    Telemetry,
)
from parism.run.executor import Capture
from parism.output.paging import Page, count_lines
from parism.parsers import registry
from parism.parsers.contract import RepoFacts
from parism.parsers.osinfo import normalize_os
from parism.output.redact.binary import is_binary, mask_binary
from parism.output.redact.echo import Echo
from parism.output.envelopes import exec_failure, exit_code_of, informative_exit, no_process
from parism.run.sandbox import egress_refusals, network_hint
from parism.run.sandbox.request import SandboxRequest
from parism.output.shape import shape
from parism.results.cursor import query_hash, sign
from parism.results.store import ResultStore
from parism.results.service import SCHEMA_VERSION, option
from parism.results.answer import budgeted, row_key, unretained
from parism.output.shape.project import precheck, project, projection_omission
from parism.output import listed
from parism.run.truth import Corrected, correct
from parism.output import exact
from parism.output.zone import zoned
from parism.wire.options import RunOptions

if TYPE_CHECKING:
    from parism.config import LoadedConfig
    from parism.guard import Decision
    from parism.output.redact import Redactor
    from parism.results.service import Results
    from parism.run.executor import Launcher
    from parism.run.sandbox import Sandbox
    from parism.wire.options import PagedOptions


HARD_CAP = 64 * 1024 * 1024  # "0 = unlimited" still has a memory bound (the engine's caps too)

#: An ``egress_refused`` note names at most this many distinct refusals, each cut to this length.
NOTE_REASONS = 3
NOTE_REASON_CHARS = 200


def cap_masked(masked: str, text: str, cap: int, name: str) -> tuple[str, Omission | None]:
    """The masked stream cut at the stream's byte cap (or at the text's own size, when that
    is larger): the markers replacing many short matches never make the answer longer than the
    output the cap let in (docs/security.md, "Bounded configuration"); the omission saying so."""
    limit = max(cap, len(text.encode("utf-8", "replace")))
    data = masked.encode("utf-8", "replace")
    if len(data) <= limit:
        return masked, None
    kept = complete_lines(data[:limit]).decode("utf-8", "ignore")
    return kept, Omission(stage="capture", reason=(
        f"{name} cut at the byte cap after masking: the redaction markers made it {len(data)} bytes, "
        f"the cap is {limit}"))


def decode(data: bytes) -> tuple[str, bool]:
    """UTF-8 text and whether it was valid (each invalid byte becomes one lone surrogate,
    ``surrogateescape``: the parser's text; ``truth.exact.display`` makes the shown one)."""
    return exact.decode(data)


def _with_bytes(field: OutputField, base64: str | None) -> OutputField:
    """A stream that is not text: its base64 beside the empty ``raw`` (docs/envelope.md)."""
    if base64 is None:
        return field
    field.raw_base64 = base64
    return field


def complete_lines(data: bytes) -> bytes:
    """A capture cut at the cap, back to its last newline (no half line reaches a parser)."""
    cut = data.rfind(b"\n")
    return data[: cut + 1] if cut >= 0 else data


def failed_silently(cmd: str, cap: Capture, stdout: str) -> bool:
    """A process that failed (non-zero exit, signal, cap) and printed nothing on stdout has no
    answer to parse: parsing "" would report an empty success (``{"processes": []}``). Only an
    informative exit (grep 1: no line matched) makes empty output an answer."""
    if stdout.strip():
        return False
    failed = cap.exit_code not in (0, None) or cap.signal is not None or cap.output_limit or cap.timed_out
    return failed and not (informative_exit(cmd, cap.exit_code) is not None and cap.signal is None)


def safe_parse(cmd: str, args: list[str], text: str, os_name: str, strict: bool,
               packs: registry.PackParsers | None = None, repo: RepoFacts | None = None) -> registry.ParseOutcome:
    """``registry.parse`` (with the engine's own parser packs), with a broken parser *module*
    (import error) reported like a parser exception instead of failing the call."""
    try:
        return registry.parse(cmd, args, text, os_name, strict_schemas=strict, packs=packs, repo=repo)
    except Exception as exc:  # noqa: BLE001 — any parser-side fault is data for the envelope
        return registry.ParseOutcome(parse_error=ParseError(
            reason="parser_exception", message=f"{cmd}: parser unavailable: {type(exc).__name__}: {exc}"[:500]))


def _settings_json(cfg: LoadedConfig) -> str:
    """The settings and the profile as JSON; a path with bytes that are not UTF-8 (the default
    ``allowed_paths`` is the working directory) is written as a ``\\udcXX`` escape."""
    try:
        return cfg.settings.model_dump_json() + cfg.profile.model_dump_json()
    except ValueError:  # pydantic_core.PydanticSerializationError: a lone surrogate
        return json.dumps([cfg.settings.model_dump(mode="json"), cfg.profile.model_dump(mode="json")])


@dataclass
class Request:
    """One call as the pipeline sees it (built by the engine from its options model)."""

    tool: str
    cmd: str
    args: list[str]
    cwd: str | None
    format: str | None = None
    include_diff: bool = False
    contract_version: str = "stable"
    echo: Echo | None = field(default=None, repr=False, compare=False)  # the call's Echo (Finisher.echo)
    timeout_ms: int | None = None  # the call's effective timeout, set by Engine._prepare
    opts: RunOptions | PagedOptions | None = field(default=None, repr=False, compare=False)  # its options model

    @property
    def run_opts(self) -> RunOptions | None:
        """The options of a ``run`` call (projection, budget, result options); None for others."""
        return self.opts if isinstance(self.opts, RunOptions) else None

    @classmethod
    def of(cls, tool: str, opts: RunOptions | PagedOptions) -> Request:
        return cls(tool, opts.cmd, list(opts.args), opts.cwd, getattr(opts, "format", None),
                   opts.includeDiff, getattr(opts, "contract_version", "stable"), opts=opts)


@dataclass
class Ran:
    """A finished execution with masked output — what ``run_paged`` caches."""

    req: Request
    decision: Decision
    launcher: Launcher
    cap: Capture
    diff: FsDiff | None
    stdout_text: str
    stderr_text: str
    redactions: int
    fallback_ran: bool
    guard_ms: float
    redact_ms: float
    cap_bytes: int  # the stdout cap this execution ran under
    warnings: list[str] = field(default_factory=list)
    omissions: list[Omission] = field(default_factory=list)
    masked_cut: set[str] = field(default_factory=set)  # streams cut at their cap after masking
    #: the masked stdout with its bytes that are not UTF-8 as lone surrogates, for the parser
    #: only (None: stdout was UTF-8, ``stdout_text`` is exact); ``stdout_text`` is its display
    stdout_exact: str | None = None
    #: A stream that is not text (parism/output/redact/binary.py): its masked bytes as base64, the
    #: text then "" (None: the stream is text, or it was withheld)
    stdout_base64: str | None = None
    stderr_base64: str | None = None

    def not_cacheable(self) -> str | None:
        c = self.cap
        for flag, why in ((c.cancelled, "cancelled"), (c.timed_out, "timeout"),
                          (c.output_limit, "output_limit"), (c.signal is not None, "signal"),
                          (c.exit_code != 0, "non_zero_exit")):
            if flag:
                return why
        return "withheld" if self.withheld else None

    @property
    def withheld(self) -> bool:
        """A stream was withheld because a redaction pattern could not finish (fail closed)."""
        return any(o.stage == "privacy" for o in self.omissions)

    def size(self) -> int:
        return (len(self.stdout_text.encode("utf-8", "replace")) + len(self.stderr_text.encode("utf-8", "replace"))
                + len(self.stdout_base64 or "") + len(self.stderr_base64 or ""))


def policy_hash(cfg: LoadedConfig) -> str:
    """The configuration and profile a result was produced under (results bind to it)."""
    return hashlib.sha256(_settings_json(cfg).encode()).hexdigest()[:16]


class Finisher:
    """After the process, for one engine: every collaborator is given here, none set later."""

    def __init__(self, cfg: LoadedConfig, redactor: Redactor, sandbox: Sandbox, os_name: str,
                 packs: registry.PackParsers | None = None, results: Results | None = None,
                 zone: str | None = None) -> None:
        self.cfg = cfg
        self.packs = packs  # the engine's parser packs, consulted before the built-ins
        self.redactor = redactor
        self.sandbox = sandbox
        self.os = os_name
        self.policy_hash = policy_hash(cfg)
        self._thresholds = cfg.settings.parsers.adaptive_format_threshold.model_dump(by_alias=True)
        self.results = results  # retain / fetch_result's store (None: nothing is kept)
        self.zone = zone  # the commands' TZ (childenv.child_zone)

    # -- before running ------------------------------------------------------------------

    def early_refusal(self, req: Request) -> Failure | None:
        """What the call's projection and budget can be refused for before the command runs:
        operator values and fields (projected, filtered, sorted on or required by the budget) the
        parser's declared row fields do not have (contract §3.3).  A budget has no fixed minimum: it is
        refused only when this call's answer with one row does not fit (``shape.budget.fit``)."""
        opts = req.run_opts
        if opts is None:
            return None
        required = opts.budget is not None and opts.budget.required_fields
        if not (opts.projection_requested() or required):
            return None
        parser = registry.parser_for(req.cmd, req.args, self.os)
        return precheck(opts, parser.rows_key if parser else None, parser.row_fields if parser else ())

    # -- stage: redact ------------------------------------------------------------------

    def redact(self, req: Request, decision: Decision, launcher: Launcher, cap: Capture, fs: FsDiff | None,
               guard_ms: float, cap_bytes: int) -> Ran:
        t0 = time.monotonic()
        # The bytes leave the capture before they are decoded: a 64 MiB output is never held as
        # bytes, text and masked text at once (its callers read only the capture's flags).
        out, err = [cap.stdout], [cap.stderr]  # each handed on once (``list.pop``): no copy outlives its use
        cap.stdout, cap.stderr = b"", b""
        ran = Ran(req, decision, launcher, cap, fs, "", "", 0, False, guard_ms, 0.0, cap_bytes)
        out_masked, out_valid, ran.stdout_base64 = self._stream(ran, out, "stdout", cap.stdout_truncated)
        if not out_valid:
            ran.stdout_exact = out_masked
        ran.stdout_text = exact.display(out_masked)
        del out_masked
        err_masked, _, ran.stderr_base64 = self._stream(ran, err, "stderr", cap.stderr_truncated)
        ran.stderr_text = exact.display(err_masked)
        if cap.stdout_truncated or cap.stderr_truncated:
            which = " ".join(n for n, t in (("stdout", cap.stdout_truncated), ("stderr", cap.stderr_truncated)) if t)
            ran.omissions.insert(0, Omission(stage="capture", reason=f"output_limit: {which} cut at the byte cap"))
        ran.redact_ms = (time.monotonic() - t0) * 1000
        return ran

    def _stream(self, ran: Ran, box: list[bytes], name: str, truncated: bool) -> tuple[str, bool, str | None]:
        """One captured stream, masked: (text, was UTF-8, None) — the text with bytes that are not
        UTF-8 as lone surrogates (``exact.decode``) —, or ("", True, base64) for bytes that are
        not text (:mod:`parism.output.redact.binary`; never cut back to a line end: they have none)."""
        if is_binary(box[0]):
            ran.warnings.append(f"{name}_binary")
            got = mask_binary(box.pop, lambda text, data: self.redactor.mask(text, truncated=truncated, subject=data))
            ran.redactions += got.count
            ran.fallback_ran = ran.fallback_ran or got.fallback_ran
            if got.withheld_reason is not None:
                ran.omissions.append(Omission(stage="privacy", reason=f"{name} withheld: {got.withheld_reason}"))
                return "", True, None
            return "", True, got.base64
        data = box.pop()
        if truncated:
            data = complete_lines(data)
        text, valid = decode(data)
        del data
        return self._mask_stream(ran, text, valid, name, truncated), valid, None

    def _mask_stream(self, ran: Ran, text: str, valid: bool, name: str, truncated: bool) -> str:
        if not valid:
            ran.warnings.append(f"{name}_not_utf8")
        masked = self.redactor.mask(text, truncated=truncated)
        ran.redactions += masked.count
        ran.fallback_ran = ran.fallback_ran or getattr(masked, "fallback_ran", False)
        if masked.withheld_reason is not None:
            ran.omissions.append(Omission(stage="privacy", reason=f"{name} withheld: {masked.withheld_reason}"))
        if masked.count and len(masked.text) > len(text):
            return self._capped(ran, masked.text, text, name)
        return masked.text

    def _capped(self, ran: Ran, masked: str, text: str, name: str) -> str:
        guard = self.cfg.settings.guard
        cap = ran.cap_bytes if name == "stdout" else (guard.max_stderr_bytes or HARD_CAP)
        kept, omission = cap_masked(masked, text, cap, name)
        if omission is not None:
            ran.masked_cut.add(name)
            ran.omissions.append(omission)
        return kept

    # -- stage: parse + shape -----------------------------------------------------------

    def run_envelope(self, ran: Ran) -> Envelope:
        req, cap = ran.req, ran.cap
        failure = exec_failure(req.cmd, cap, self._timeout_ms(req), ran.cap_bytes, ran.stderr_text)
        refused = egress_refusals(ran.launcher)
        if refused:
            ran.warnings.append("egress_refused")  # a 403 body on stdout is the proxy's, not the server's
        notes = self._egress_notes(req, refused)
        if failure is not None and failure.reason == "non_zero_exit" and ran.decision is not None:
            hint = network_hint(req.cmd, bool(ran.decision.network), cap.exit_code, ran.stderr_text, refused)
            if hint:
                failure = failure.model_copy(update={"hint": hint})
        parse_it = (failure is None or cap.output_limit or
                    (informative_exit(req.cmd, cap.exit_code) is not None and cap.signal is None))
        parse_it = parse_it and not failed_silently(req.cmd, cap, ran.stdout_text)
        if any(o.stage == "privacy" and o.reason.startswith("stdout") for o in ran.omissions):
            parse_it = False
        if "stdout_binary" in ran.warnings:
            parse_it = False  # no parser reads bytes: they are carried as they are
        t0 = time.monotonic()
        body = self._body(req, ran.stdout_text, parse_it, failure, ids=self._ids(ran), exact_text=ran.stdout_exact,
                          zone=self.zone, ran_in=ran.decision.cwd if ran.decision is not None else None,
                          repo=getattr(ran.decision, "git_facts", None))
        parse_ms = (time.monotonic() - t0) * 1000
        shaping_refused = body.failure is not None and body.failure.kind == "config"  # projection, budget
        env = Envelope(
            ok=failure is None and not shaping_refused, exitCode=exit_code_of(cap), signal=cap.signal,
            cmd=req.cmd, args=self.echo(req, ran.decision.cwd).args(), cwd=ran.decision.cwd,
            duration_ms=cap.duration_ms, stdout=_with_bytes(body.stdout, ran.stdout_base64),
            stderr=_with_bytes(OutputField(raw=ran.stderr_text), ran.stderr_base64),
            diff=ran.diff, truncated=True if cap.stdout_truncated or "stdout" in ran.masked_cut else None,
            failure=self._masked(req, body.failure), notes=notes, omission=(ran.omissions + body.omissions) or None,
        )
        env = self._extras(env, ran, body, parse_ms)
        opts = req.run_opts
        raw_lines, page_size = count_lines(ran.stdout_text), self.cfg.settings.guard.default_page_size
        cut = next((o for o in env.omission or () if o.reason == "max_items"), None)
        if cut is not None and cut.rows_total is not None and cut.rows_returned is not None:
            result_id, retained = self._retention(env, req)
            if retained and result_id and opts is not None:  # fetch_result pages on from the stored copy
                cursor = sign(result_id, query_hash(opts.query()), cut.rows_returned)
                env.continuation = Continuation(result_id=result_id, cursor=cursor, total=cut.rows_total,
                                                rows_left=cut.rows_total - cut.rows_returned)
            else:
                env.continuation = unretained(cut.rows_total, cut.rows_returned, raw_lines, page_size,
                                              "guard.max_items")
        if opts is None or opts.budget is None:
            return env
        result_id, retained = self._retention(env, req)
        return budgeted(env, row_key(env.stdout.parsed, body.rows_key), opts.budget, query=opts.query(),
                        result_id=result_id, retained=retained, raw_lines=raw_lines, page_size=page_size)

    def _timeout_ms(self, req: Request) -> int:
        """The timeout this call ran under (``Request.timeout_ms``, set by the engine)."""
        return req.timeout_ms or self.cfg.settings.guard.timeout_ms

    def _retention(self, env: Envelope, req: Request) -> tuple[str | None, bool]:
        """(result_id, retained) of this answer: a continuation cursor needs both. ``_extras``
        has already stored a ``retain`` call (``store.service.Results.keep``): a result the store
        refused (over its per-result limit) gets no cursor it could not honour."""
        if env.review is None:
            return None, False
        return env.review.result_id, bool(env.review.retained)

    def page_envelope(self, ran: Ran, pg: Page, info: PageInfo, byte_cap: int) -> Envelope:
        """``run_paged``: no parser; the page is a slice of the masked stdout."""
        req, cap = ran.req, ran.cap
        failure = exec_failure(req.cmd, cap, self._timeout_ms(req), ran.cap_bytes, ran.stderr_text)
        omissions = list(ran.omissions)
        if pg.cut:
            omissions.append(Omission(stage="capture", reason=f"page cut at {byte_cap} bytes; use a smaller page_size"))
        return Envelope(
            ok=failure is None, exitCode=exit_code_of(cap), signal=cap.signal, cmd=req.cmd,
            args=self.echo(req, ran.decision.cwd).args(), cwd=ran.decision.cwd,
            duration_ms=cap.duration_ms, stdout=_with_bytes(OutputField(raw=pg.raw), ran.stdout_base64),
            stderr=_with_bytes(OutputField(raw=ran.stderr_text), ran.stderr_base64),
            diff=ran.diff, truncated=True if (cap.stdout_truncated or pg.cut or "stdout" in ran.masked_cut) else None,
            page_info=info,
            failure=self._masked(req, failure), notes=self._egress_notes(req, egress_refusals(ran.launcher)),
            omission=omissions or None,
        )

    def parse_saved(self, req: Request, raw: str, os_name: str | None) -> Envelope:
        """``parse_output``: saved text through redact → parse → shape; nothing ran."""
        try:
            target = normalize_os(os_name) if os_name is not None else self.os
        except ValueError as exc:
            return no_process(req.cmd, req.args, "", Failure(kind="config", reason="invalid_request", message=str(exc)))
        text = raw if isinstance(raw, str) else str(raw)
        masked = self.redactor.mask(text)
        omissions = []
        if masked.withheld_reason is not None:
            omissions.append(Omission(stage="privacy", reason=f"stdout withheld: {masked.withheld_reason}"))
        shown, cut = masked.text, None
        if masked.count and len(shown) > len(text):
            shown, cut = cap_masked(shown, text, self.cfg.settings.guard.max_output_bytes or HARD_CAP, "stdout")
            omissions += [cut] if cut is not None else []
        display_text = exact.display(shown)
        body = self._body(req, display_text, masked.withheld_reason is None, None, target,
                          exact_text=shown if display_text is not shown else None)
        return Envelope(
            ok=True, exitCode=0, cmd=req.cmd, args=self.echo(req).args(), cwd="",
            duration_ms=0, stdout=body.stdout, stderr=OutputField(raw=""), diff=None,
            truncated=True if cut is not None else None,
            failure=self._masked(req, body.failure), omission=(omissions + body.omissions) or None,
        )

    def _ids(self, ran: Ran) -> Callable[[object], Corrected] | None:
        """The host-side id correction (parism/run/truth) when the call's sandbox maps only the
        server's uid; ``None`` when the kernel already shows true owners or nothing ran confined."""
        plan = getattr(ran.launcher, "plan", None)
        if plan is None or plan.run_as.route != "host_correction":
            return None
        return partial(correct, ran.req.cmd, [str(a) for a in ran.req.args], cwd=ran.decision.cwd,
                       namespace=plan.namespace)

    def _body(self, req: Request, text: str, parse_it: bool, exec_fail: Failure | None,
              os_name: str | None = None, ids: Callable[[object], Corrected] | None = None,
              exact_text: str | None = None, zone: str | None = None, ran_in: str | None = None,
              repo: RepoFacts | None = None) -> Body:
        """``text``: the display text (``raw``); ``exact_text``: the same with its bytes that are
        not UTF-8 as lone surrogates (None: ``text`` is exact), which only the parser reads;
        ``repo``: what the guard's git reading knows of the repository (git branch's upstreams)."""
        body = Body(stdout=OutputField(raw=text), failure=exec_fail)
        if exact_text is not None:
            body.lossless = False  # raw holds U+FFFD where the output had other bytes
        if not parse_it:
            return body
        outcome = safe_parse(req.cmd, req.args, text if exact_text is None else exact_text, os_name or self.os,
                             self.cfg.settings.parsers.strict_schemas, self.packs, repo)
        body.outcome = outcome
        if outcome.not_found:  # a success without a parse: raw is the answer, nothing failed (issue #26)
            body.stdout = OutputField(raw=text, parse_error=ParseError(
                reason="parser_not_found", message=f"No parser registered for '{req.cmd}': read stdout.raw"))
            body.failure = exec_fail
            return body
        if outcome.parse_error is not None:
            error = outcome.parse_error
            if exact_text is not None or any(map(exact.has_lone, req.args)):  # it may quote a name or an argument
                shown_error, _ = exact.exact_names(error.model_dump(mode="python", exclude_none=True))
                error = ParseError.model_validate({k: v for k, v in shown_error.items() if not k.endswith("_b64")})
            body.stdout = OutputField(raw=text, parse_error=error)
            body.failure = exec_fail or Failure(kind="parse", reason=error.reason, message=error.message)
            return body
        parsed, id_warnings = outcome.parsed, []
        if ids is not None:  # between parse and shape: shaping sees the host's ids
            fixed = ids(parsed)
            parsed, id_warnings = fixed.parsed, fixed.warnings
        if ran_in and outcome.parser is not None and outcome.parser.id == "ls":  # a name list's names are real
            parsed = listed.verify([str(a) for a in req.args], parsed, ran_in)
        if exact_text is not None or "\\" in text:  # bytes that are not UTF-8, printed or escaped (ls -b \\377)
            parsed, replaced = exact.exact_names(parsed)  # as display + <field>_b64 (docs/envelope.md, "Exact names")
            body.lossless = body.lossless and not replaced
        if zone is not None and outcome.parser is not None:  # local times get their offset (output/zone.py)
            parsed = zoned(outcome.parser.id, parsed, zone)
        body.parsed = parsed  # what the result store keeps: the full value before shaping
        parser = outcome.parser
        rows_key = parser.rows_key if parser else None
        opts = req.run_opts
        # a budget pages every row (continuation); max_items would lose the ones past it
        max_items = 0 if opts is not None and opts.budget is not None else self.cfg.settings.guard.max_items
        value, projected = parsed, None
        if opts is not None and opts.projection_requested():
            projected = project(value, opts, rows_key, parser.row_fields if parser else (), max_items)
            if isinstance(projected, Failure):
                body.failure = exec_fail or projected
                return body
            value, rows_key, max_items = projected.parsed, projected.key or rows_key, 0
            body.omissions.extend(projection_omission(projected))
        plain = opts is None or opts.adaptive_allowed()
        # the default answer's tables serve a budget's pages too; evidence needs row objects
        tables = opts is not None and opts.evidence == "none" and projected is None
        requested = req.format if plain or tables else (req.format or "json")
        shaped = shape(value, requested=requested, rows_key=rows_key, max_items=max_items,
                       thresholds=self._thresholds, parser=parser if tables else None,
                       args=req.args, text=text, paged=opts is not None and opts.budget is not None)
        body.rows_key = rows_key
        keep_raw = shaped.keep_raw and projected is None  # projection replaces raw (contract §11)
        body.stdout = OutputField(raw=text if keep_raw else "", parsed=shaped.parsed)
        body.omissions.extend(shaped.omissions)
        body.warnings = id_warnings + shaped.warnings
        if shaped.lossless_failure is not None:
            body.lossless = False
            body.failure = exec_fail or Failure(kind="parse", reason="representation_not_lossless",
                                                message=shaped.lossless_failure)
        return body

    # -- optional blocks ------------------------------------------------------------------

    def _extras(self, env: Envelope, ran: Ran, body: Body, parse_ms: float) -> Envelope:
        if self.cfg.settings.telemetry.enabled:
            total = ran.guard_ms + ran.cap.duration_ms + ran.redact_ms + parse_ms
            env.telemetry = Telemetry(guard_ms=round(ran.guard_ms, 2), exec_ms=round(float(ran.cap.duration_ms), 2),
                                      parse_ms=round(parse_ms, 2), redact_ms=round(ran.redact_ms, 2),
                                      total_ms=round(total, 2), raw_bytes=len(ran.stdout_text.encode("utf-8")))
        if ran.fallback_ran:
            env.regex_engine = self.redactor.report()
        if wants_review(ran.req):
            env.review = self._review(ran, body)
            if self.results is not None:
                self.results.keep(env, ran, body)
        return env

    def _review(self, ran: Ran, body: Body) -> Review:
        out = body.outcome
        parser = out.parser if out is not None else None
        if out is None or out.not_found or out.parse_error is not None:
            parse_complete: bool | str = False
        else:
            parse_complete = "unknown" if out.native_json else True
        cap = ran.cap
        sandbox = self.sandbox.review(ran.decision.request or SandboxRequest(), ran.launcher)
        return Review(
            result_id=ResultStore.new_id(), parser_id=parser.id if parser else None,
            parser_version=parser.version if parser else None, schema_version=SCHEMA_VERSION,
            content_hash=hashlib.sha256((ran.stdout_base64 or ran.stdout_text).encode("utf-8")).hexdigest()[:16],
            source_complete=not (cap.stdout_truncated or cap.timed_out or cap.cancelled),
            parse_complete=parse_complete,  # type: ignore[arg-type]
            representation_lossless=body.lossless,
            privacy_transform="masked" if ran.redactions or ran.withheld else "none",
            retained=False,
            warnings=ran.warnings + body.warnings,
            sandbox=SandboxReview(**sandbox) if sandbox else None,
        )

    def _egress_notes(self, req: Request, refused: list[str]) -> list[Note] | None:
        """The ``egress_refused`` note of a call the egress proxy refused something: in every
        answer (the lean default one too), whether or not the command failed because of it."""
        if not refused:
            return None
        distinct = list(dict.fromkeys(refused))
        shown = "; ".join(clip(r, NOTE_REASON_CHARS) for r in distinct[:NOTE_REASONS])
        more = f" (+{len(distinct) - NOTE_REASONS} more)" if len(distinct) > NOTE_REASONS else ""
        message = (f"the egress proxy refused {len(refused)} request(s): {shown}{more}. Any 403 "
                   "answer on stdout is the proxy's refusal, not the destination's answer")
        return [Note(name="egress_refused", message=self.echo(req).text(message), count=len(refused))]

    def _masked(self, req: Request, failure: Failure | None) -> Failure | None:
        if failure is None:
            return None
        return self.echo(req).failure(failure)

    def echo(self, req: Request, cwd: str = "") -> Echo:
        """The call's echo masks, made on first use and kept on the request: the envelope's
        args, the failure, and the engine's cmd/cwd echoes share one argv reading and one gate
        pass (``cwd``: the directory the envelope will echo, cleared in that pass)."""
        if req.echo is None:
            req.echo = self.redactor.echo([str(a) for a in req.args], str(req.cmd), expected=(str(req.cmd), cwd))
        return req.echo


def wants_review(req: Request) -> bool:
    """The review block (with the result id) answers ``contract_version: "next"`` and every run
    that uses a result option: the follow-up tools need the id."""
    return (req.contract_version == "next" or option(req, "retain", False)
            or option(req, "evidence", "none") != "none")


@dataclass
class Body:
    stdout: OutputField
    failure: Failure | None
    outcome: Any = None
    omissions: list[Omission] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    lossless: bool = True
    parsed: Any = None  # the parsed value after host-side id correction, before shaping
    rows_key: str | None = None  # the row array of the shaped value (projected or declared)
