"""Windows parsers beyond the corpus. Windows tools cannot run here: these inputs are written
from the tools' documented formats (Microsoft's command references), expected values by hand."""

from __future__ import annotations

from pathlib import Path

from parism.parsers import registry

CORPUS = Path(__file__).resolve().parents[3].parent / "shared" / "corpus" / "jc"

TASKLIST = """
Image Name                     PID Session Name        Session#    Mem Usage
========================= ======== ================ =========== ============
System Idle Process              0 Services                   0          8 K
svchost.exe                    912 Services                   0     24,532 K
chrome.exe                   14228 Console                    1    212,400 K
"""


def parse(cmd, args, text):
    out = registry.parse(cmd, args, text, "windows")
    assert out.parse_error is None, out.parse_error
    return out.parsed


def test_tasklist_table_columns_from_separator():
    rows = parse("tasklist", [], TASKLIST)["processes"]
    assert rows[0] == {"name": "System Idle Process", "pid": 0, "session_name": "Services",
                       "session_number": 0, "mem_usage_kb": 8}
    assert rows[2]["name"] == "chrome.exe" and rows[2]["pid"] == 14228 and rows[2]["mem_usage_kb"] == 212400


def test_tasklist_csv_keeps_commas_inside_fields():
    text = ('"Image Name","PID","Session Name","Session#","Mem Usage"\r\n'
            '"Code, Helper.exe","1234","Console","1","10,240 K"\r\n')
    assert parse("tasklist", ["/FO", "CSV"], text)["processes"] == [
        {"name": "Code, Helper.exe", "pid": 1234, "session_name": "Console", "session_number": 1,
         "mem_usage_kb": 10240}]


def test_tasklist_no_match_is_an_empty_list_not_an_error():
    out = parse("tasklist", [], "INFO: No tasks are running which match the specified criteria.\r\n")
    assert out == {"processes": []}


def test_dir_bare_does_not_invent_types():
    """§22 #51: dir /b marked every entry (directories included) as a file."""
    out = parse("dir", ["/B"], "Program Files\r\nnotes.txt\r\n")
    assert out["entries"] == [{"name": "Program Files"}, {"name": "notes.txt"}]


def test_dir_iso_only_when_unambiguous():
    text = (" Directory of C:\\x\r\n\r\n03/04/2021  03:15 PM             1,024 a.txt\r\n"
            "04.03.2021  15:15                 2 b.txt\r\n               2 File(s)          1,026 bytes\r\n")
    e = parse("dir", [], text)["entries"]
    assert e[0]["modified_at"] == "2021-03-04T15:15:00" and e[0]["size_bytes"] == 1024
    assert e[1]["modified_at"] == "2021-03-04T15:15:00" and e[1]["date"] == "04.03.2021"


def test_dir_wide_is_unsupported_with_hint():
    out = registry.parse("dir", ["/W"], "[.]  [..]  a.txt\r\n", "windows")
    assert out.parse_error.reason == "unsupported_format" and out.parse_error.hint.args == []


def test_systeminfo_os_build_type_is_its_own_field():
    """§22 #51: the 'OS Build' test also matched 'OS Build Type'."""
    p = parse("systeminfo", [], (CORPUS / "systeminfo" / "windows-10__systeminfo.out").read_text())
    assert p["os_version"] == "10.0.19042 N/A Build 19042"
    assert p["os_build_type"] == "Multiprocessor Free"
    assert p["processors"] == ["Intel64 Family 6 Model 158 Stepping 13 GenuineIntel ~2400 Mhz"]


def test_ipconfig_keeps_every_gateway_and_ipv6():
    """§22 #51: only the last IPv6 was kept and gateway continuation lines were lost."""
    text = ("\r\nWindows IP Configuration\r\n\r\n   Host Name . . . . . . . . . . . . : H\r\n\r\n"
            "Ethernet adapter Ethernet:\r\n\r\n"
            "   IPv6 Address. . . . . . . . . . . : 2001:db8::1(Preferred)\r\n"
            "   IPv6 Address. . . . . . . . . . . : 2001:db8::2(Deprecated)\r\n"
            "   IPv4 Address. . . . . . . . . . . : 192.168.1.5(Preferred)\r\n"
            "   Default Gateway . . . . . . . . . : fe80::1%12\r\n"
            "                                       192.168.1.1\r\n")
    a = parse("ipconfig", ["/all"], text)["adapters"][0]
    assert a["ipv6"] == ["2001:db8::1", "2001:db8::2"]
    assert a["gateway"] == ["fe80::1%12", "192.168.1.1"] and a["ipv4"] == ["192.168.1.5"]


def test_windows_parsers_refuse_other_os():
    out = registry.parse("dir", [], " Directory of C:\\\r\n", "linux")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"
