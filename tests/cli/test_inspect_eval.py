"""``parism inspect`` and ``parism eval`` run as a user runs them: a real process in a temporary
HOME and cwd, real commands under the real sandbox."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from parism.cli.inspect_cmd import UNAVAILABLE, approx_tokens, o200k_tokens
from tests.cli.test_cli import cli, work  # noqa: F401  (work is a fixture)

pytestmark = pytest.mark.timeout(180)


def test_approx_tokenizer_by_hand() -> None:
    # parism/approx 2.0.0: "a" 1, "-" 1, "bc" 1, "_" 1 (a mark), "de" 1, "12345" ceil(5/3)=2,
    # "!" 1, whitespace 0, "é" 1 (not ASCII)
    assert approx_tokens("a-bc_de  12345!\n\té") == 9
    assert approx_tokens("abcdefghij") == 2 and approx_tokens("abcdefghijk") == 3
    assert approx_tokens(" \n\t") == 0


def test_inspect_json_counts_echo(work: Path) -> None:  # noqa: F811
    done = cli(work, "inspect", "--json", "echo hello world")  # one argument: split on spaces
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    real = subprocess.run(["echo", "hello", "world"], capture_output=True, text=True).stdout
    raw = report["views"]["raw"]
    assert raw["value"] == real and raw["chars"] == len(real)
    # by hand: "hello" ceil(5/5)=1 + "world" 1 = 2; parsed and compact are JSON null: "null" = 1
    assert raw["tokens"]["approx"] == 2
    assert report["views"]["parsed"]["tokens"]["approx"] == 1
    assert report["views"]["compact"]["tokens"]["approx"] == 1
    assert report["args"] == ["hello", "world"]
    assert report["failure"] is None and report["parse_error"]["reason"] == "parser_not_found"
    o200k = o200k_tokens(["hello world\n"])
    expected = UNAVAILABLE if o200k is None else o200k[0]
    assert raw["tokens"]["o200k"] == expected
    assert report["tokenizers"]["o200k"] == (UNAVAILABLE if o200k is None else "gpt-tokenizer o200k_base")


def test_inspect_table_and_parsed_view(work: Path) -> None:  # noqa: F811
    (work / "a.txt").write_text("x\n")
    done = cli(work, "inspect", "ls", "-la")  # several arguments: taken as they are
    assert done.returncode == 0, done.stderr
    head = done.stdout.splitlines()
    assert head[0] == "$ ls -la" and head[1].split() == ["view", "chars", "approx", "o200k"]
    assert "== RAW ==" in done.stdout and "== COMPACT ==" in done.stdout and "a.txt" in done.stdout
    report = json.loads(cli(work, "inspect", "--json", "ls", "-la").stdout)
    names = {e["name"] for e in report["views"]["parsed"]["value"]["entries"]}
    assert "a.txt" in names and set(report["views"]) == {"raw", "parsed", "compact"}


def test_inspect_goes_through_the_guard(work: Path) -> None:  # noqa: F811
    assert Path("/etc/shadow").exists()  # the armed trap: the file is there to be read
    done = cli(work, "inspect", "--json", "cat /etc/shadow")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["failure"]["kind"] == "guard" and report["views"]["raw"]["value"] == ""


def test_eval_shipped_scenarios_meet_their_expectations(work: Path) -> None:  # noqa: F811
    # the control for retry-rate's exec failure: the real ls does fail on a missing name
    assert subprocess.run(["ls", str(work / "nonexistent")], capture_output=True).returncode == 2
    done = cli(work, "eval", "--verbose")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "MISS" not in done.stdout
    assert "retry-rate: ls nonexistent  execution=non_zero_exit  parse=skipped  task=False" in done.stdout
    assert "retry-rate: cat /etc/shadow  execution=blocked" in done.stdout
    assert "execution-parse: execution 6/6, parse 4/4, task 6/6" in done.stdout
    assert list(work.iterdir()) == [work / "home"], "eval leaves the user's cwd untouched"


def test_eval_one_scenario_and_a_wrong_expectation(work: Path) -> None:  # noqa: F811
    done = cli(work, "eval", "completion")
    assert done.returncode == 0, done.stdout
    assert "execution-parse" not in done.stdout and "completion: execution 4/4" in done.stdout
    wrong = work / "wrong.toml"
    wrong.write_text('[s]\nitems = [\n  { cmd = "echo", args = ["test"], task = "contains:nope", '
                     'expect = { execution = "ok", task = true } },\n  { cmd = "pwd" },\n]\n')
    done = cli(work, "eval", "--scenarios", str(wrong))
    assert done.returncode == 1
    assert "MISS s: echo test  execution=ok  parse=missing_parser  task=False (expected True)" in done.stdout
    assert "s: execution 1/1, parse 0/0, task 0/1" in done.stdout  # pwd has no expectation


@pytest.mark.parametrize(("body", "named"), [
    ('[s]\nitems = [{ cmd = "pwd", expct = {} }]\n', "expct"),
    ('[s]\nitems = [{ cmd = "pwd", expect = { speed = 1 } }]\n', "speed"),
    ('[s]\nitems = [{ cmd = "pwd", task = "maybe" }]\n', "maybe"),
])
def test_eval_refuses_a_bad_scenario_file(work: Path, body: str, named: str) -> None:  # noqa: F811
    bad = work / "bad.toml"
    bad.write_text(body)
    done = cli(work, "eval", "--scenarios", str(bad))
    assert done.returncode == 2 and named in done.stderr and "valid" in done.stderr
    done = cli(work, "eval", "nosuch")
    assert done.returncode == 2 and "execution-parse" in done.stderr
