"""DNS from a sandbox with network: dig reaches the resolvers of resolv.conf through Parism's
relay, and no other server. The resolver here is a DNS stand-in in the test's own namespace
(the relay's resolver list is pointed at it: the host's real resolver is never contacted);
queries are counted on it, and the armed trap is the same dig without Parism.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from parism.run.sandbox import network as sandbox_network
from tests.security.sandbox.helpers import run, sandbox_factory, workspace
from tests.security.sandbox.netlab import METADATA, Internet, internet, settle

__all__ = ["sandbox_factory", "workspace", "internet"]

DIG = shutil.which("dig") or "/usr/bin/dig"
pytestmark = pytest.mark.skipif(not Path(DIG).exists(), reason="dig not installed")


def dig(*args: str) -> list[str]:
    return [DIG, "+short", "+time=2", "+tries=1", *args]


@pytest.mark.parametrize("transport", ["+notcp", "+tcp"])
def test_dig_reaches_the_resolver_through_the_relay(sandbox_factory, workspace: Path, internet: Internet,
                                                    monkeypatch: pytest.MonkeyPatch, transport: str) -> None:
    monkeypatch.setattr(sandbox_network, "system_resolvers", lambda path="": (internet.addr,))
    sb = sandbox_factory([str(workspace)])
    before = len(internet.queries())
    r = run(sb, dig(transport, f"@{internet.addr}", "relayed.test", "A"), str(workspace), network=True)
    assert r.out.strip() == "192.0.2.99", r.out + r.err
    assert internet.queries()[before:] == ["relayed.test"]


def test_dig_cannot_reach_another_server(sandbox_factory, workspace: Path, internet: Internet,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox_network, "system_resolvers", lambda path="": (internet.addr,))
    sb = sandbox_factory([str(workspace)])
    before = len(internet.queries())
    # +tcp: the stand-in's UDP replies from its primary address, which a direct dig would drop
    r = run(sb, dig("+tcp", f"@{METADATA}", "stolen.test", "A"), str(workspace), network=True)
    assert "192.0.2.99" not in r.out, r.out
    settle()
    assert internet.queries()[before:] == []
    trap = subprocess.run(dig("+tcp", f"@{METADATA}", "stolen.test", "A"), capture_output=True, text=True, timeout=20)
    assert trap.stdout.strip() == "192.0.2.99"  # armed: the same dig without Parism is answered
    assert internet.queries()[before:] == ["stolen.test"]
