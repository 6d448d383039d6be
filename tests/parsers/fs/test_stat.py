"""stat: §22 bug 45 (macOS drops atime and owner names; several files → only the first)."""

from __future__ import annotations

from tests.parsers.fs._util import err, ok

MAC = ('16777221 73839387 -rw-r--r-- 1 kbrazil staff 0 307 "May 22 16:15:02 2020" "Mar 11 13:47:39 2020" '
       '"Mar 11 13:47:40 2020" "Mar 11 13:47:38 2020" 4096 8 0 airport-I.json\n'
       '16777221 73839388 -rw-r--r-- 1 kbrazil staff 0 348 "May 22 16:15:02 2020" "Mar 11 13:47:39 2020" '
       '"Mar 11 13:47:39 2020" "Mar 11 13:47:39 2020" 4096 8 0 my file.out\n')
# GNU coreutils 8 in a UTF-8 locale (corpus centos-7.7 stat): curly quotes, SELinux context, no birth
GNU8 = """  File: \u2018/bin/[\u2019
  Size: 41488     \tBlocks: 88         IO Block: 4096   regular file
Device: fd00h/64768d\tInode: 50332811    Links: 1
Access: (0755/-rwxr-xr-x)  Uid: (    0/    root)   Gid: (    0/    root)
Context: system_u:object_r:bin_t:s0
Access: 2019-08-19 23:25:31.000000000 -0700
Modify: 2019-08-19 23:25:31.000000000 -0700
Change: 2019-10-16 09:21:27.422473404 -0700
 Birth: -
  File: '/bin/sh' -> 'bash'
  Size: 4         \tBlocks: 0          IO Block: 4096   symbolic link
Device: fd00h/64768d\tInode: 50332812    Links: 1
Access: (0777/lrwxrwxrwx)  Uid: (    0/    root)   Gid: (    0/    root)
Access: 2019-08-19 23:25:31.000000000 -0700
Modify: 2019-08-19 23:25:31.000000000 -0700
Change: 2019-10-16 09:21:27.422473404 -0700
 Birth: -
"""


def test_bug45_macos_keeps_atime_and_owner_names() -> None:
    files = ok(["stat", "a", "b"], MAC, os="macos")["files"]
    assert len(files) == 2
    f = files[0]
    assert (f["uid_name"], f["gid_name"]) == ("kbrazil", "staff")
    assert f["accessed_at"] == "2020-05-22T16:15:02" and f["changed_at"] == "2020-03-11T13:47:40"
    assert f["birth_at"] == "2020-03-11T13:47:38" and f["size_bytes"] == 307
    assert files[1]["file"] == "my file.out"


def test_bug45_every_gnu_file_is_parsed() -> None:
    res = ok(["stat", "/bin/[", "/bin/sh"], GNU8)
    first, link = res["files"]
    assert first["file"] == "/bin/[" and first["context"] == "system_u:object_r:bin_t:s0"
    assert first["mode_octal"] == "0755" and first["uid_name"] == "root" and "birth_at" not in first
    assert first["modified_at"] == "2019-08-19T23:25:31.000000000-07:00"
    assert (link["file"], link["target"]) == ("/bin/sh", "bash")


def test_crlf_capture_without_birth() -> None:
    res = ok(["stat", "/bin/["], GNU8.split("  File: '/bin/sh'")[0].replace("\n", "\r\n"))
    assert res["files"][0]["file_type"] == "regular file" and res["files"][0]["changed_at"].endswith("-07:00")


def test_a_format_out_of_range_is_unsupported_with_hint() -> None:
    pe = err(["stat", "-c", "%10s", "f"], "        12\n")
    assert pe.reason == "unsupported_format" and pe.hint.args == ["f"]


def test_garbage_is_unrecognized() -> None:
    assert err(["stat", "f"], "something else entirely\n").reason == "unrecognized_output"


def test_bsd_format_string_is_dropped_from_the_hint() -> None:
    pe = err(["stat", "-f", "%z", "file"], "12\n", os="macos")
    assert pe.reason == "unsupported_format" and pe.hint.args == ["file"]
