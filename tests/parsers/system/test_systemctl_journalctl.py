"""systemctl and journalctl on outputs in their documented formats (systemd does not run on this
machine, so these fixtures are written from systemd's documented output, checked by hand)."""

from __future__ import annotations

from parism.parsers import registry

# systemctl list-units --all: LOAD/ACTIVE/SUB one space apart in places, a failed unit with the
# C-locale '*' marker, a JOB column, and the legend footer.
LIST_UNITS = """\
  UNIT                        LOAD      ACTIVE   SUB     JOB   DESCRIPTION
  cron.service                loaded    active   running       Regular background program processing daemon
* foo.service                 not-found inactive dead          foo.service
  ssh.service                 loaded    active   running start OpenBSD Secure Shell server
  systemd-journald.socket     loaded    active   running       Journal Socket

LOAD   = Reflects whether the unit definition was properly loaded.
ACTIVE = The high-level unit activation state, i.e. generalization of SUB.
SUB    = The low-level unit activation state, values depend on unit type.
JOB    = Pending job for the unit.

4 loaded units listed.
"""


def test_list_units_by_header_positions():
    """§22 #38: splitting on 2+ spaces lost rows and mixed fields."""
    out = registry.parse("systemctl", ["list-units", "--all"], LIST_UNITS, "linux")
    assert out.parse_error is None, out.parse_error
    units = out.parsed["units"]
    assert [u["name"] for u in units] == ["cron.service", "foo.service", "ssh.service", "systemd-journald.socket"]
    assert units[1] == {"name": "foo.service", "load": "not-found", "active": "inactive", "sub": "dead",
                        "job": None, "description": "foo.service", "failed": True}
    assert units[2]["job"] == "start" and units[2]["description"] == "OpenBSD Secure Shell server"
    assert out.parsed["listed"] == 4


def test_list_units_without_legend_or_header():
    text = "cron.service loaded active running Regular background program processing daemon\n"
    out = registry.parse("systemctl", ["--no-legend", "--plain"], text, "linux")
    assert out.parsed["units"][0]["description"] == "Regular background program processing daemon"


def test_status_hints_show():
    out = registry.parse("systemctl", ["status", "ssh"], "● ssh.service - OpenBSD Secure Shell\n", "linux")
    assert out.parse_error.reason == "unsupported_format"
    assert out.parse_error.hint.args == ["show", "ssh"]


def test_show_properties():
    out = registry.parse("systemctl", ["show", "ssh"], "Id=ssh.service\nActiveState=active\nMainPID=812\n", "linux")
    assert out.parsed == {"units": [{"Id": "ssh.service", "ActiveState": "active", "MainPID": "812"}]}


JOURNAL = """\
-- Journal begins at Mon 2026-11-30 06:00:00 UTC, ends at Mon 2026-11-30 06:10:00 UTC. --
2026-11-30T06:01:02+0000 web1 sshd[1234]: Accepted publickey for deploy from 10.0.0.5 port 52312 ssh2
2026-11-30T06:01:03+0000 web1 kernel: eth0: Link is Up - 1Gbps/Full
2026-11-30T06:01:04+0000 web1 myapp[99]: Traceback (most recent call last):
    File "app.py", line 1
-- Reboot --
"""


def test_journalctl_short_iso():
    out = registry.parse("journalctl", ["-o", "short-iso", "-n", "100"], JOURNAL, "linux")
    assert out.parse_error is None, out.parse_error
    e = out.parsed["entries"]
    assert e[0] == {"timestamp": "2026-11-30T06:01:02+0000", "hostname": "web1", "unit": "sshd", "pid": 1234,
                    "message": "Accepted publickey for deploy from 10.0.0.5 port 52312 ssh2"}
    assert e[1]["unit"] == "kernel" and "pid" not in e[1] and e[1]["message"] == "eth0: Link is Up - 1Gbps/Full"
    assert e[2]["message"].endswith('\nFile "app.py", line 1')


def test_journalctl_verbose_hints_short_iso():
    out = registry.parse("journalctl", ["-o", "verbose", "-u", "ssh"], "Mon 2026-11-30 ...\n", "linux")
    assert out.parse_error.reason == "unsupported_format"
    assert out.parse_error.hint.args == ["-u", "ssh", "-o", "short-iso"]


def test_journalctl_json_passes_through():
    text = '{"MESSAGE":"hi","_PID":"1"}\n{"MESSAGE":"there","_PID":"2"}\n'
    out = registry.parse("journalctl", ["-o", "json"], text, "linux")
    assert out.parse_error is None and out.parsed == {"rows": [{"MESSAGE": "hi", "_PID": "1"},
                                                               {"MESSAGE": "there", "_PID": "2"}]}
