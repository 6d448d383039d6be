"""The author workflow end to end in a temporary HOME: capture → init-parser → expected value →
test (pass; a deliberate regression fails with a diff and exit 1) → add → a running MCP server
uses the pack without a restart. The documentation's example pack (`ip -br addr`) parses real
output, checked against the kernel's own list of interfaces (/sys/class/net)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from tests.unit.shape.test_naive_reader import naive_rows
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "ip-brief"
CONFIG = """\
[guard]
allowed_commands = ["ls", "ip"]

[guard.command_policies.ip]
positionals = "any"
flags = { "-br" = "bool" }
single_dash_long = true
sandbox = { namespace = "host_net" }
"""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    (h / ".parism").mkdir(parents=True)
    (h / ".parism" / "config.toml").write_text(CONFIG)
    tmp_path.chmod(0o755)
    return h


def cli(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "parism", *args], capture_output=True, text=True,
                          timeout=120, env=env, cwd=cwd or home)


def test_capture_init_test_add(home: Path, tmp_path: Path) -> None:
    out = cli(home, "capture", "ip -br addr")
    assert out.returncode == 0, out.stderr
    saved = Path(out.stdout.split("Fixture saved: ", 1)[1].strip())
    manifest = json.loads(saved.read_text())
    assert manifest["manifest_version"] == 1 and manifest["tool"] == {"command": "ip", "args": ["-br", "addr"]}
    work = tmp_path / "work"
    work.mkdir()
    assert cli(home, "init-parser", "ip", "-d", str(work)).returncode == 0
    assert cli(home, "init-parser", "ip", "-d", str(work)).returncode == 2  # refuses an existing one
    assert cli(home, "test", str(work / "ip")).returncode == 0  # the fresh scaffold passes
    pack = work / "ip"
    shutil.copy(EXAMPLE / "parser.py", pack / "parser.py")
    (pack / "fixtures" / "ip-example.json").unlink()
    # the expected value, reviewed by hand: the kernel's interfaces, in ip's order
    names = [line.split()[0].split("@")[0] for line in manifest["stdout"].splitlines() if line.strip()]
    assert sorted(names) == sorted(os.listdir("/sys/class/net"))
    rows = []
    for line in manifest["stdout"].splitlines():
        if line.strip():
            parts = line.split()
            name, _, link = parts[0].partition("@")
            rows.append({"name": name, "state": parts[1], "addresses": parts[2:], **({"link": link} if link else {})})
    manifest["expected"] = {"parsed": {"interfaces": rows}, "reviewed_by": "test"}
    (pack / "fixtures" / saved.name).write_text(json.dumps(manifest))
    ok = cli(home, "test", str(pack))
    assert ok.returncode == 0 and "2 match" in ok.stdout, ok.stdout
    manifest["expected"]["parsed"]["interfaces"][0]["state"] = "SOMETHING-ELSE"
    (pack / "fixtures" / saved.name).write_text(json.dumps(manifest))
    bad = cli(home, "test", str(pack))
    assert bad.returncode == 1 and "/interfaces/0/state  value  expected \"SOMETHING-ELSE\"" in bad.stdout, bad.stdout
    added = cli(home, "add", str(EXAMPLE))
    assert added.returncode == 0 and "[guard.command_policies.ip]" in added.stdout, added.stdout
    assert (home / ".parism" / "parsers" / "ip" / "parser.py").is_file()
    shown = cli(home, "inspect", "--json", "ip -br addr")  # inspect shows the added pack's reading
    assert shown.returncode == 0, shown.stderr
    parsed = json.loads(shown.stdout)["views"]["parsed"]["value"]
    assert sorted(i["name"] for i in parsed["interfaces"]) == sorted(os.listdir("/sys/class/net"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_running_server_picks_up_an_added_pack(home: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "parism", "serve"],
                                   env={"HOME": str(home), "PYTHONPATH": str(ROOT), "PATH": os.environ["PATH"]},
                                   cwd=str(home))
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        before = (await s.call_tool("run", {"cmd": "ip", "args": ["-br", "addr"]})).structured_content
        assert before["stdout"]["parsed"] is None and before["stdout"]["parse_error"]["reason"] == "parser_not_found", before
        assert cli(home, "add", str(EXAMPLE)).returncode == 0
        await anyio.sleep(1.2)  # the re-scan interval
        after = (await s.call_tool("run", {"cmd": "ip", "args": ["-br", "addr"]})).structured_content
        described = (await s.call_tool("describe", {})).structured_content
    names = sorted(i["name"] for i in naive_rows(after["stdout"]["parsed"]["interfaces"]))  # the default table
    assert names == sorted(os.listdir("/sys/class/net")), after
    assert {"name": "ip", "status": "loaded"}.items() <= described["packs"][0].items()
    assert "ip" in described["available_parsers"]


def test_a_broken_pack_is_listed_and_the_server_keeps_serving(home: Path) -> None:
    bad = home / ".parism" / "parsers" / "broken"
    bad.mkdir(parents=True)
    (bad / "parser.py").write_text("raise RuntimeError('boom at import')\n")
    shadow = home / ".parism" / "parsers" / "myls"
    shadow.mkdir()
    (shadow / "parser.py").write_text("from parism.packs.types import ParserPack\nPACK = ParserPack(name='ls', parse=lambda r, a, c: {})\n")
    out = cli(home, "describe")
    packs = {p["path"].rsplit("/", 1)[1]: p for p in json.loads(out.stdout)["packs"]}
    assert packs["broken"]["status"] == "error" and "boom at import" in packs["broken"]["error"]
    assert packs["myls"]["status"] == "shadowed" and "pack_overrides" in packs["myls"]["error"]
    ran = cli(home, "run", "--", "ls", "-la")
    assert json.loads(ran.stdout)["stdout"]["parsed"]["entries"]  # the built-in ls still parses
