"""lsof, curl -I and dig: real output captured on this machine against sockets, an HTTP server and
the resolver the capture script controls; corpus lines checked by hand; §22.3 #42 and #52."""

from __future__ import annotations

from tests.parsers.network.fixtures import corpus_text, parse, parse_fixture


# lsof ---------------------------------------------------------------------------------------------

def test_lsof_listen_state_split() -> None:
    parsed, exp = parse_fixture("linux", "lsof", "i")
    row = parsed["entries"][0]
    assert (row["pid"], row["name"], row["state"], row["node"], row["type"]) == (
        exp["pid"], f"127.0.0.1:{exp['tcp_port']}", "LISTEN", "TCP", "IPv4")


def test_lsof_process_files() -> None:
    parsed, exp = parse_fixture("linux", "lsof", "p")
    assert {r["pid"] for r in parsed["entries"]} == {exp["pid"]}
    names = {r["name"] for r in parsed["entries"]}
    assert f"127.0.0.1:{exp['tcp_port']}" in names and f"127.0.0.1:{exp['udp_port']}" in names
    assert "unparsed" not in parsed


def test_lsof_empty_cells_do_not_shift() -> None:
    rows = parse("lsof", [], corpus_text("lsof/centos-7.7__lsof")).parsed["entries"]
    # systemd 1 root cwd unknown <empty cells> /proc/1/cwd (readlink: Permission denied)
    assert rows[0] == {"command": "systemd", "pid": 1, "user": "root", "fd": "cwd", "type": "unknown",
                       "name": "/proc/1/cwd (readlink: Permission denied)"}
    nofd = rows[3]  # systemd 1 root NOFD /proc/1/fd (opendir: Permission denied)
    assert (nofd["fd"], nofd["name"], "type" in nofd) == ("NOFD", "/proc/1/fd (opendir: Permission denied)", False)


def test_lsof_field_output_is_unsupported() -> None:
    out = parse("lsof", ["-F", "pcn"], "p1\ncsystemd\n")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"


# curl -I ------------------------------------------------------------------------------------------

def test_curl_single_response() -> None:
    parsed, exp = parse_fixture("linux", "curl", "sI")
    assert parsed["status_code"] == 200 and parsed["status_text"] == "OK" and parsed["http_version"] == "1.1"
    for key, value in exp["headers"].items():
        assert parsed["headers"][key] == value
    cookies = [h["value"] for h in parsed["responses"][0]["header_list"] if h["name"] == "Set-Cookie"]
    assert cookies == ["a=1; Path=/", "b=2; Path=/"]


def test_bug_52_bundled_sI_and_redirects() -> None:
    """§22.3 #52: `-sI` bundles were not detected and redirect headers were merged."""
    parsed, exp = parse_fixture("linux", "curl", "sIL-redirect")
    assert [r["status_code"] for r in parsed["responses"]] == exp["statuses"]
    assert parsed["responses"][0]["headers"]["location"] == "/final"
    assert "location" not in parsed["headers"]  # top level = the last response only
    assert parsed["status_code"] == 200


def test_bug_52_http2_without_reason() -> None:
    text = "HTTP/2 301 \r\nlocation: https://www.example.com/\r\ncontent-length: 0\r\n\r\n"
    p = parse("curl", ["-sI", "https://example.com"], text).parsed
    assert p["http_version"] == "2" and p["status_code"] == 301 and "status_text" not in p
    assert p["headers"]["location"] == "https://www.example.com/"


def test_curl_verbose_merged_output() -> None:
    p = parse("curl", ["-ILvs", "http://example.com"], corpus_text("curl-head/generic__curl_head--ILvs-example-com")).parsed
    # by hand: example.com 200, then a pasted prompt and google.com's 301 → 200 (three blocks)
    assert [r["status_code"] for r in p["responses"]] == [200, 301, 200]
    assert p["responses"][0]["headers"]["etag"] == '"3147526947"'
    assert p["responses"][1]["headers"]["location"] == "http://www.google.com/"
    assert p["unparsed"] == ["√ ~/temp % curl -ILvs http://google.com 2>&1 > /dev/null "]  # pasted prompt


def test_curl_without_head_is_unsupported_with_hint() -> None:
    out = parse("curl", ["-s", "https://example.com"], "<html></html>")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"
    assert out.parse_error.hint is not None and out.parse_error.hint.args == ["-sI", "-s", "https://example.com"]


# dig ----------------------------------------------------------------------------------------------

def test_dig_answer() -> None:
    parsed, exp = parse_fixture("linux", "dig", "a")
    assert (parsed["query"], parsed["query_type"], parsed["status"]) == (exp["name"], "A", "NOERROR")
    assert sorted(a["value"] for a in parsed["answers"] if a["type"] == "A") == exp["addresses"]
    assert parsed["answers"][0]["name"] == "pypi.org" and isinstance(parsed["query_time_ms"], int)


def test_bug_42_dig_short() -> None:
    """§22.3 #42: `dig +short` gave an empty result."""
    parsed, exp = parse_fixture("linux", "dig", "short")
    assert parsed == {"values": exp["addresses"]}


def test_dig_noall_answer() -> None:
    parsed, exp = parse_fixture("linux", "dig", "noall-answer")
    assert [a["value"] for a in parsed["answers"]] == exp["addresses"]
    assert parsed["answers"][0]["ttl"] >= 0 and parsed["answers"][0]["class"] == "IN"


def test_dig_two_queries() -> None:
    parsed, _ = parse_fixture("linux", "dig", "two")
    assert [q["query"] for q in parsed["queries"]] == ["pypi.org", "files.pythonhosted.org"]
    assert {a["query"] for a in parsed["answers"]} == {"pypi.org", "files.pythonhosted.org"}


def test_dig_txt_with_spaces_and_axfr() -> None:
    p = parse("dig", ["@81.4.108.41", "AXFR", "zonetransfer.me"], corpus_text("dig/osx-10.14.6__dig-axfr"), "macos").parsed
    hinfo = next(a for a in p["answers"] if a["type"] == "HINFO")
    assert hinfo["value"] == '"Casio fx-700G" "Windows XP"'
    assert "query" not in p  # AXFR prints no question section


def test_dig_multiline_record_is_joined() -> None:
    text = (";; ANSWER SECTION:\n"
            "example.com.\t3600\tIN\tSOA\tns.icann.org. noc.dns.icann.org. (\n"
            "\t\t\t\t2024010101 ; serial\n\t\t\t\t7200       ; refresh (2 hours)\n"
            "\t\t\t\t3600 1209600 3600 )\n")
    rec = parse("dig", ["+multiline", "example.com", "SOA"], text).parsed["answers"][0]
    assert rec["value"] == "ns.icann.org. noc.dns.icann.org. 2024010101 7200 3600 1209600 3600"


def test_dig_noall_without_answer_is_unsupported() -> None:
    out = parse("dig", ["+noall", "example.com"], "")
    assert out.parse_error is not None and out.parse_error.reason == "unsupported_format"
    assert out.parse_error.hint is not None and out.parse_error.hint.args == ["+noall", "example.com", "+answer"]


def test_curl_write_out_after_headers() -> None:
    text = "HTTP/1.1 204 No Content\r\nServer: x\r\n\r\n204"
    p = parse("curl", ["-sI", "-w", "%{http_code}", "http://h"], text).parsed
    assert p["status_code"] == 204 and p["write_out"] == "204" and "unparsed" not in p


def test_curl_real_http2() -> None:
    parsed, exp = parse_fixture("linux", "curl", "sI-http2")
    assert [r["status_code"] for r in parsed["responses"]] == exp["statuses"]
    assert parsed["http_version"] == exp["http_version"] and "status_text" not in parsed
    assert "unparsed" not in parsed and parsed["headers"]


def test_lsof_fast_path_agrees_with_header_table() -> None:
    """The full-row fast path must give exactly what ``HeaderTable.read`` gives."""
    from parism.parsers.network.lsof import _full_row
    from parism.parsers.table import HeaderTable

    checked = 0
    for case in ("lsof/centos-7.7__lsof", "lsof/centos-7.7__lsof-sudo", "lsof/ubuntu-18.04__lsof-sudo"):
        lines = corpus_text(case).splitlines()
        table = HeaderTable.from_header(lines[0])
        for line in lines[1:]:
            fast = _full_row(table, line)
            if fast is not None:
                assert fast == table.read(line), line
                checked += 1
    assert checked > 1000
