"""``compare_results``: what changed between two retained results (contract §15).

Read-only and local: it compares the two stored copies the caller names — nothing is run,
nothing is watched. Order: compatibility verdict from the fingerprints (``verdict``) → domain
rules (``identity.py``) → row identity (a duplicate key stops the comparison: matching would
silently drop a row) → ``added / removed / changed``. A row without identity, or a side that is
incomplete (capture cut, parse incomplete, parser cut), never produces an added/removed claim:
the reason goes to ``partial.withheld_reasons`` instead.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from parism.results.compare.identity import Domain, Withheld, domain_for
from parism.wire.envelope import CompareRefusals, CompareResult, ComparePartial, FieldChange, KeyConflict, RowDiff
from parism.results.pack import unpack_json
from parism.results.store import StoredResult

_SUBJECT = (("cmd", "different command"), ("argv_hash", "different arguments"),
            ("cwd_real", "different working directory"), ("parser_id", "different parser"))
_IDENTITY = (("context", "different user context"), ("schema_version", "different schema version"))


def verdict(base: dict[str, Any], cur: dict[str, Any], strict: bool) -> tuple[str, list[str], list[str]]:
    """(compatibility, reasons, ignored) from two fingerprints (contract §15.2)."""
    for key, what in _SUBJECT:
        if base.get(key) != cur.get(key):
            shown = f": {base.get(key)!r} vs {cur.get(key)!r}" if key in ("cmd", "parser_id", "cwd_real") else \
                f": {' '.join(base.get('argv_masked', []))!r} vs {' '.join(cur.get('argv_masked', []))!r}"
            return "incompatible", [what + shown], []
    reasons = [what for key, what in _IDENTITY if base.get(key) != cur.get(key)]
    ignored = []
    for key, what in (("policy_hash", "guard policy differs"), ("platform", "host platform differs"),
                      ("tools", "tool versions differ"), ("locale", "locale differs")):
        if base.get(key) != cur.get(key):
            if key == "tools" and strict:
                reasons.append(what)
            else:
                ignored.append(what)
    if reasons:
        return "unknown", reasons, ignored
    return ("same" if base.get("content_hash") == cur.get("content_hash") else "compatible"), [], ignored


def incomplete(item: StoredResult, parsed: Any) -> str | None:
    rv = item.review
    for key in ("source_complete", "parse_complete", "representation_lossless"):
        if rv.get(key) is not True:
            return f"{key} is {rv.get(key)!r}"
    summary = parsed.get("_summary") if isinstance(parsed, dict) else None
    if isinstance(summary, dict) and summary.get("truncated"):
        return "the parser cut its rows (_summary.truncated)"
    return None


def compare(base: StoredResult, cur: StoredResult, *, keys: Sequence[str] | None = None,
            ignore_fields: Sequence[str] | None = None, strict: bool = False) -> CompareResult:
    head = {"base_id": base.result_id, "current_id": cur.result_id}
    compat, reasons, ignored = verdict(base.fingerprint, cur.fingerprint, strict)

    def refuse(code: str, message: str, extra: list[str] = (), domain: str | None = None, **more: Any) -> CompareResult:
        return CompareResult(ok=True, comparable=False, **head, refusal_reason=code, message=message, domain=domain,
                             refusals=CompareRefusals(comparable=False, compatibility=compat,  # type: ignore[arg-type]
                                                      reasons=[*reasons, *extra], ignored=ignored), **more)

    if compat == "incompatible":
        return refuse("different_subject", reasons[0])
    base_parsed = unpack_json(base.parsed_json) if base.parsed_json else None
    cur_parsed = unpack_json(cur.parsed_json) if cur.parsed_json else None
    dom = domain_for(base.cmd, base.fingerprint.get("parser_id"), base_parsed, keys)
    if dom == "domain_withheld":
        return refuse("domain_withheld", f"'{base.cmd}' results are not compared: pids are reused, so rows have no identity",
                      ["ps rows have no identity (pids are reused)"])
    if isinstance(dom, str):
        return refuse("domain_unsupported", f"no comparison rules for '{base.cmd}' "
                      f"({base.fingerprint.get('parser_id') or 'no parser'}); name identity fields with keys",
                      [f"no comparison rules for {base.cmd}"])
    if compat == "unknown" and strict:
        return refuse("identity_unknown", "strict: " + "; ".join(reasons), domain=dom.name)
    return _diff(base, cur, base_parsed, cur_parsed, dom, head, compat, reasons, ignored,
                 frozenset(ignore_fields or ()), refuse)


def _rows(item: StoredResult, parsed: Any, dom: Domain) -> tuple[str, list[Any]]:
    key = dom.rows_key or item.rows_key
    if isinstance(parsed, dict) and key and isinstance(parsed.get(key), list):
        return key, parsed[key]
    if isinstance(parsed, list):
        return "", parsed
    return "", [parsed] if isinstance(parsed, dict) and "metadata" in parsed else []


def _diff(base: StoredResult, cur: StoredResult, bp: Any, cp: Any, dom: Domain, head: dict[str, str],
          compat: str, reasons: list[str], ignored: list[str], ignore: frozenset[str], refuse: Any) -> CompareResult:
    withheld: list[str] = []
    sides = []
    for name, item, parsed in (("base", base, bp), ("current", cur, cp)):
        arr, rows = _rows(item, parsed, dom)
        ctx = {**item.fingerprint.get("context", {}), "list_kind": (parsed or {}).get("kind") if isinstance(parsed, dict) else None}
        keyed: dict[str, int] = {}
        counts: Counter[str] = Counter()
        for i, row in enumerate(rows):
            k = dom.key(row, ctx)
            if isinstance(k, Withheld):
                withheld.append(f"{name} row {i}: {k.reason}")
                continue
            counts[k] += 1
            keyed.setdefault(k, i)
        sides.append((arr, rows, keyed, counts))
    conflicts = [KeyConflict(key=k, count=n, side=side)  # type: ignore[arg-type]
                 for side, (_, _, _, counts) in zip(("base", "current"), sides) for k, n in counts.items() if n > 1]
    if conflicts:
        return refuse("duplicate_identity", f"identity key {conflicts[0].key!r} appears {conflicts[0].count} times "
                      f"in the {conflicts[0].side} result; comparing would silently drop a row",
                      [f"duplicate identity {c.key!r}" for c in conflicts], domain=dom.name, key_conflicts=conflicts)
    (barr, brows, bkeys, _), (carr, crows, ckeys, _) = sides
    if not bkeys and not ckeys and withheld:
        return refuse("identity_unknown", "no row of either result has an identity: " + withheld[0],
                      withheld[:1], domain=dom.name,
                      partial=ComparePartial(base_incomplete=False, current_incomplete=False, withheld_reasons=withheld[:50]))
    b_inc, c_inc = incomplete(base, bp), incomplete(cur, cp)
    claims = not withheld
    added, removed, changed, same = [], [], [], 0
    for k, ci in ckeys.items():
        bi = bkeys.get(k)
        if bi is None:
            if b_inc:
                withheld.append(f"withheld a row missing from the incomplete base result ({b_inc}): {k}")
            elif claims:
                added.append(RowDiff(key=k, status="added", current_pointer=f"{_ptr(carr)}/{ci}"))
            continue
        changes = _changes(brows[bi], crows[ci], ignore)
        if changes:
            changed.append(RowDiff(key=k, status="changed", changes=changes,
                                   base_pointer=f"{_ptr(barr)}/{bi}", current_pointer=f"{_ptr(carr)}/{ci}"))
        else:
            same += 1
    for k, bi in bkeys.items():
        if k in ckeys:
            continue
        if c_inc:
            withheld.append(f"withheld a missing row in the incomplete current result ({c_inc}): {k}")
        elif claims:
            removed.append(RowDiff(key=k, status="removed", base_pointer=f"{_ptr(barr)}/{bi}"))
    partial = None
    if withheld or b_inc or c_inc:
        partial = ComparePartial(base_incomplete=bool(b_inc), current_incomplete=bool(c_inc),
                                 withheld_reasons=withheld[:50] + ([f"… {len(withheld) - 50} more"] if len(withheld) > 50 else []))
    return CompareResult(ok=True, comparable=True, **head, domain=dom.name,
                         refusals=CompareRefusals(comparable=True, compatibility=compat,  # type: ignore[arg-type]
                                                  reasons=reasons, ignored=ignored),
                         added=added, removed=removed, changed=changed, unchanged_count=same,
                         ignored_fields=sorted(ignore), partial=partial)


def _ptr(arr: str) -> str:
    return "/" + arr.replace("~", "~0").replace("/", "~1") if arr else ""


def _changes(before: Any, after: Any, ignore: frozenset[str]) -> list[FieldChange]:
    if not (isinstance(before, dict) and isinstance(after, dict)):
        return [] if _same_value(before, after) else [FieldChange(field="", before=before, after=after)]
    out = []
    for f in list(before) + [k for k in after if k not in before]:
        if f in ignore or f.startswith("_"):
            continue
        b, a = before.get(f), after.get(f)
        if not _same_value(b, a):
            out.append(FieldChange(field=f, before=b, after=a))
    return out


def _same_value(a: Any, b: Any) -> bool:
    """SameValue: NaN equals NaN, bool is not a number, structures compare deeply."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b) and (isinstance(a, bool) or isinstance(b, bool)):
        return False
    return a == b
