"""The engine's side of the result tools: keep a run's result, and answer the three read tools.

``Results.keep`` runs after the envelope of a ``run`` is built. It stores only what the
redactor left (the masked stdout/stderr and the parse of that text), in the order the store's
accounting needs: raw sizes first, then the parsed value packed against the remaining
allowance, then the evidence, whose size is estimated before it is located. Anything over
the per-result limit stops there and the id is remembered as ``evicted`` with its size.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from parism.results.compare import compare
from parism.results.compare.fingerprint import fingerprint
from parism.wire.envelope import CompareResult, Envelope, ExplainResult
from parism.results.evidence import estimate
from parism.results.evidence import locate
from parism.results.evidence.explain import explain
from parism.results.cursor import query_hash
from parism.results.fetch import fetch, refusal
from parism.results.pack import pack_json, utf8_len
from parism.results.store import NOTHING_RERUN, ResultStore, StoredResult, StoreLimits, StoreMiss

SCHEMA_VERSION = "parism/1.1"  # the envelope schema the review block describes


def option(req: Any, name: str, default: Any) -> Any:
    """One option of the call's options model (``RunOptions``); ``default`` for other calls."""
    return getattr(req.opts, name, default) if getattr(req, "opts", None) is not None else default


class Results:
    def __init__(self, settings: Any, child_env: Mapping[str, str], os_name: str, policy_hash: str) -> None:
        self.store = ResultStore(StoreLimits.from_settings(settings.store))
        self._env = child_env
        self._os = os_name
        self._policy = policy_hash

    def keep(self, env: Envelope, ran: Any, body: Any, query: dict[str, Any] | None = None) -> None:
        """Retain the run behind ``env`` when it asked to; record the outcome in ``env.review``."""
        review = env.review
        assert review is not None
        req = ran.req
        rid = review.result_id
        if not option(req, "retain", False):
            self.store.decline(rid, "not_retained", f"result {rid} was not retained (the run did not ask for "
                                                    f"retain: true); {NOTHING_RERUN}")
            if option(req, "evidence", "none") != "none":
                review.warnings.append("evidence_not_retained: evidence is kept only with retain: true")
            return
        opts = getattr(req, "opts", None)
        item = self._item(env, ran, body, query if query is not None else opts.query() if opts is not None else {})
        if isinstance(item, StoreMiss):
            review.warnings.append(f"not_retained: {item.message}")
            return
        stored = self.store.put(item)
        review.retained = stored.retained
        if not stored.retained:
            review.warnings.append(f"not_retained: {stored.message}")

    def _item(self, env: Envelope, ran: Any, body: Any, query: dict[str, Any]) -> StoredResult | StoreMiss:
        req, review = ran.req, env.review
        assert review is not None
        rid = review.result_id
        allowance = self.store.allowance()
        size = utf8_len(ran.stdout_text) + utf8_len(ran.stderr_text)
        if size > allowance:
            return self._too_large(rid, size)
        outcome = body.outcome
        parser = outcome.parser if outcome is not None and outcome.parse_error is None and not outcome.not_found else None
        parsed = body.parsed if parser is not None or (outcome is not None and outcome.native_json) else None
        packed = None
        if parsed is not None:
            got = pack_json(parsed, allowance - size)
            if isinstance(got, int):
                return self._too_large(rid, size + got, at_least=True)
            packed = got
            size += len(packed)
        mode = option(req, "evidence", "none")
        evidence = None
        if mode != "none" and parser is not None and parser.evidence:
            need = estimate(parsed, parser.rows_key, mode)
            if size + need > allowance:
                return self._too_large(rid, size + need, at_least=True)
            evidence = locate(ran.stdout_text, parsed, parser.rows_key, parser.id, mode)
            size += evidence.nbytes()
            if evidence.missing:
                review.warnings.append(f"evidence: {evidence.missing} value(s) have no span (computed values "
                                       f"or defaults; explain_result says source_kind none)")
        elif mode != "none":
            review.warnings.append(f"evidence: the {parser.id if parser else 'raw'} result has no evidence spans "
                                   f"(parsers with evidence: describe)")
        review.retained = True
        wire_review = review.model_dump(mode="json")
        fp = fingerprint(cmd=req.cmd, args=req.args, masked_args=env.args, cwd=env.cwd, policy_hash=self._policy,
                         parser_id=review.parser_id, schema_version=review.schema_version,
                         content_hash=review.content_hash, child_env=self._env, os_name=self._os)
        size += 512  # the item's own small fields (review, fingerprint, echoes)
        return StoredResult(
            result_id=rid, stdout=ran.stdout_text, stderr=ran.stderr_text, parsed_json=packed,
            rows_key=parser.rows_key if parser else None, row_fields=tuple(parser.row_fields) if parser else (),
            parser_id=parser.id if parser else None, evidence=evidence, evidence_mode=mode, review=wire_review,
            cmd=req.cmd, args=list(env.args), cwd=env.cwd, exit_code=env.exitCode, ok=env.ok, fingerprint=fp,
            query=query, qhash=query_hash(query), size=size,
            extra={"format": req.format, "failure": env.failure.model_dump(mode="json") if env.failure else None,
                   "omission": [o.model_dump(mode="json") for o in env.omission or []]})

    def _too_large(self, rid: str, size: int, *, at_least: bool = False) -> StoreMiss:
        stored = self.store.too_large(rid, size, at_least=at_least)
        return StoreMiss("evicted", stored.message or "")

    # -- the read tools ------------------------------------------------------------------

    def fetch(self, result_id: str, cursor: str, max_items: int) -> Envelope:
        item = self.store.get(result_id)  # a miss wins over a bad cursor
        if isinstance(item, StoreMiss):
            return refusal(item.reason, item.message)
        return fetch(item, cursor, max_items)

    def explain(self, result_id: str, pointer: str) -> ExplainResult:
        item = self.store.get(result_id)
        if isinstance(item, StoreMiss):
            return ExplainResult(ok=False, result_id=result_id, pointer=pointer, reason=item.reason, message=item.message)
        return explain(item, pointer, self.store.age_ms(item))

    def compare(self, base_id: str, current_id: str, keys: list[str] | None = None,
                ignore_fields: list[str] | None = None, strict: bool = False) -> CompareResult:
        base = self.store.get(base_id)
        cur = self.store.get(current_id)
        for side, got in (("base", base), ("current", cur)):
            if isinstance(got, StoreMiss):
                return CompareResult(ok=False, comparable=False, base_id=base_id, current_id=current_id,
                                     reason=got.reason, message=f"{side}: {got.message}")
        assert isinstance(base, StoredResult) and isinstance(cur, StoredResult)
        return compare(base, cur, keys=keys, ignore_fields=ignore_fields, strict=strict)
