"""compare_results on real runs (git status before/after edits, ps) and on kubectl JSON (no
cluster here: the documented -o json shape, retained through the same packing as a run)."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

from parism.results.compare import compare
from parism.results.compare.fingerprint import fingerprint
from parism.parsers import registry
from parism.results.pack import pack_json
from parism.results.store import ResultStore, StoredResult
from tests.unit.results.samples import git_repo


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@e", *args], cwd=repo, check=True,
                   capture_output=True)


def test_git_status_before_and_after_edits(make_engine, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    engine = make_engine()
    base = engine.run("git", ["status", "--porcelain"], cwd=str(repo), retain=True)
    assert base.ok, base.failure
    (repo / "new.txt").unlink()               # an untracked file goes away
    (repo / "later.txt").write_text("x\n")     # another appears
    _git(repo, "add", "a.txt")                 # a.txt: ' M' (worktree) -> 'M ' (index)
    cur = engine.run("git", ["status", "--porcelain"], cwd=str(repo), retain=True)
    assert cur.ok, cur.failure
    res = engine.compare_results(base.review.result_id, cur.review.result_id)  # type: ignore[union-attr]
    real = str(repo.resolve())
    assert res.comparable and res.domain == "git" and res.refusals.compatibility == "compatible"  # type: ignore[union-attr]
    assert [r.key for r in res.added] == [f"{real}:later.txt"]
    assert [r.key for r in res.removed] == [f"{real}:new.txt"]
    changed = {r.key: {c.field: (c.before, c.after) for c in r.changes} for r in res.changed}
    assert changed == {f"{real}:a.txt": {"xy": (" M", "M "), "index": (" ", "M"), "worktree": ("M", " ")}}
    assert res.unchanged_count == 1  # the rename moved.txt
    # what git itself says changed, checked against the two outputs directly
    before = {ln[3:] for ln in base.stdout.raw.splitlines()}
    after = {ln[3:] for ln in cur.stdout.raw.splitlines()}
    assert {k.split(":", 1)[1] for k in (r.key for r in res.added)} == after - before
    again = engine.compare_results(cur.review.result_id, cur.review.result_id)  # type: ignore[union-attr]
    assert again.refusals.compatibility == "same" and not (again.added or again.removed or again.changed)  # type: ignore[union-attr]
    ignored = engine.compare_results(base.review.result_id, cur.review.result_id,  # type: ignore[union-attr]
                                     ignore_fields=["xy", "index", "worktree"])
    assert ignored.changed == [] and ignored.unchanged_count == 2


def test_different_subjects_are_refused(make_engine, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    engine = make_engine()
    a = engine.run("git", ["status", "--porcelain"], cwd=str(repo), retain=True)
    b = engine.run("git", ["log", "-n", "1"], cwd=str(repo), retain=True)
    c = engine.run("ls", ["-la"], cwd=str(repo), retain=True, format="json")
    ab = engine.compare_results(a.review.result_id, b.review.result_id)  # type: ignore[union-attr]
    assert not ab.comparable and ab.refusal_reason == "different_subject"
    assert ab.refusals.reasons[0].startswith("different arguments")  # type: ignore[union-attr]
    ac = engine.compare_results(a.review.result_id, c.review.result_id)  # type: ignore[union-attr]
    assert ac.refusal_reason == "different_subject" and "different command: 'git' vs 'ls'" in ac.message  # type: ignore[operator]
    cc = engine.compare_results(c.review.result_id, c.review.result_id)  # type: ignore[union-attr]
    assert cc.refusal_reason == "domain_unsupported"
    keyed = engine.compare_results(c.review.result_id, c.review.result_id, keys=["name"])  # type: ignore[union-attr]
    assert keyed.comparable and keyed.domain == "keys" and keyed.unchanged_count == len(c.stdout.parsed["entries"])
    miss = engine.compare_results(a.review.result_id, "r_000000000000000000000000")  # type: ignore[union-attr]
    assert not miss.ok and miss.reason == "unknown_id" and miss.message.startswith("current:")  # type: ignore[union-attr]


def test_ps_is_withheld(make_engine, tmp_path: Path) -> None:
    engine = make_engine(guard={"max_output_bytes": 1 << 22})  # ps aux on a crowded host passes 100 KB
    a = engine.run("ps", ["aux"], cwd=str(tmp_path), retain=True)
    b = engine.run("ps", ["aux"], cwd=str(tmp_path), retain=True)
    assert a.ok and b.ok
    res = engine.compare_results(a.review.result_id, b.review.result_id)  # type: ignore[union-attr]
    assert not res.comparable and res.refusal_reason == "domain_withheld"
    assert res.added == res.removed == res.changed == []


POD = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "web-0", "namespace": "default", "uid": "6f1c-aaaa"},
       "status": {"phase": "Running"}}


def _kube_item(doc: Any, args: list[str], text: str | None = None) -> StoredResult:
    text = text if text is not None else json.dumps(doc)
    outcome = registry.parse("kubectl", args, text, "linux")
    assert outcome.parse_error is None
    rid = ResultStore.new_id()
    fp = fingerprint(cmd="kubectl", args=args, masked_args=args, cwd="/tmp", policy_hash="p",
                     parser_id=outcome.parser_id, schema_version="parism/1.1",
                     content_hash=str(hash(text)), child_env={"LANG": "C.UTF-8"}, os_name="linux")
    packed = pack_json(outcome.parsed, 1 << 20)
    assert isinstance(packed, bytes)
    review = {"source_complete": True, "parse_complete": True, "representation_lossless": True}
    return StoredResult(result_id=rid, stdout=text, stderr="", parsed_json=packed,
                        rows_key=outcome.parser.rows_key if outcome.parser else None, row_fields=(),
                        parser_id=outcome.parser_id, evidence=None, evidence_mode="none", review=review,
                        cmd="kubectl", args=args, cwd="/tmp", exit_code=0, ok=True, fingerprint=fp,
                        query={}, qhash="", size=len(text))


def test_kubectl_json_with_uids_compares_by_uid() -> None:
    args = ["get", "pods", "-o", "json"]
    recreated = copy.deepcopy(POD)
    recreated["metadata"]["uid"] = "9b2e-bbbb"  # same name, new resource
    other = copy.deepcopy(POD)
    other["metadata"].update(name="db-0", uid="77aa-cccc")
    base = _kube_item({"kind": "List", "items": [POD, other]}, args)
    changed_other = copy.deepcopy(other)
    changed_other["status"]["phase"] = "Failed"
    cur = _kube_item({"kind": "List", "items": [recreated, changed_other]}, args)
    res = compare(base, cur)
    assert res.comparable and res.domain == "kubernetes"
    assert [r.key for r in res.added] == ["(current)/default/Pod/9b2e-bbbb"]
    assert [r.key for r in res.removed] == ["(current)/default/Pod/6f1c-aaaa"]
    assert [(r.key, [(c.field, c.before, c.after) for c in r.changes]) for r in res.changed] == [
        ("(current)/default/Pod/77aa-cccc", [("status", {"phase": "Running"}, {"phase": "Failed"})])]


def test_kubectl_without_uids_makes_no_claim() -> None:
    table = "NAME    READY   STATUS    RESTARTS   AGE\nweb-0   1/1     Running   0          5d\n"
    args = ["get", "pods"]
    res = compare(_kube_item(None, args, table), _kube_item(None, args, table.replace("web-0", "web-1")))
    assert not res.comparable and res.refusal_reason == "identity_unknown"
    assert res.partial and any("metadata.uid" in r for r in res.partial.withheld_reasons)
    assert res.added == res.removed == []
    no_uid = copy.deepcopy(POD)
    del no_uid["metadata"]["uid"]
    mixed = compare(_kube_item({"kind": "List", "items": [POD]}, ["get", "pods", "-o", "json"]),
                    _kube_item({"kind": "List", "items": [POD, no_uid]}, ["get", "pods", "-o", "json"]))
    assert mixed.comparable and mixed.added == [] and mixed.removed == []  # one row withheld: no claims
    assert mixed.partial and mixed.partial.withheld_reasons


def test_duplicate_identity_stops_the_comparison() -> None:
    args = ["get", "pods", "-o", "json"]
    base = _kube_item({"kind": "List", "items": [POD, POD]}, args)
    res = compare(base, _kube_item({"kind": "List", "items": [POD]}, args))
    assert not res.comparable and res.refusal_reason == "duplicate_identity"
    assert res.key_conflicts and res.key_conflicts[0].count == 2 and res.key_conflicts[0].side == "base"


def test_incomplete_side_withholds_removed_rows() -> None:
    args = ["get", "pods", "-o", "json"]
    other = copy.deepcopy(POD)
    other["metadata"]["uid"] = "x-1"
    base = _kube_item({"kind": "List", "items": [POD, other]}, args)
    cur = _kube_item({"kind": "List", "items": [POD]}, args)
    cur.review["source_complete"] = False  # the capture was cut
    res = compare(base, cur)
    assert res.comparable and res.removed == []
    assert res.partial and res.partial.current_incomplete
    assert any("incomplete current result" in r for r in res.partial.withheld_reasons)


def test_fingerprint_keeps_no_secret() -> None:
    fp = fingerprint(cmd="curl", args=["-H", "Authorization: Bearer sk-live-123456"], masked_args=["-H", "[REDACTED]"],
                     cwd="/tmp", policy_hash="p", parser_id=None, schema_version=None, content_hash="c",
                     child_env={"API_TOKEN_NAME_ONLY": "s3cret", "LANG": "C.UTF-8"}, os_name="linux")
    text = json.dumps(fp)
    assert "sk-live" not in text and "s3cret" not in text
    assert "API_TOKEN_NAME_ONLY" in fp["observation"]["env_names"]
