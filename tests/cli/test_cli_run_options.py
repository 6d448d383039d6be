"""``parism run`` projection and budget flags: a real CLI process, real ls, checked against lstat."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from parism.cli.run import where_condition
from tests.cli.test_cli import cli, work  # noqa: F401 - the fixture

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("text, want", [
    ("size_bytes>=100", ("size_bytes", "gte", 100)), ("size>1.5", ("size", "gt", 1.5)),
    ("name=a=b", ("name", "eq", "a=b")), ("name!=x", ("name", "ne", "x")), ("name^=f", ("name", "prefix", "f")),
    ("name~=.txt", ("name", "contains", ".txt")), ("n<=3", ("n", "lte", 3)), ("n<3", ("n", "lt", 3)),
    ("type=null", ("type", "eq", None)), ('name="007"', ("name", "eq", "007")), ("name=007x", ("name", "eq", "007x")),
    ("flag=true", ("flag", "eq", True)),
])
def test_where_flag_reads_field_op_value(text: str, want: tuple[str, str, object]) -> None:
    assert where_condition(text) == dict(zip(("field", "op", "value"), want))


def test_run_flags_project_a_real_listing(work: Path) -> None:  # noqa: F811
    for i, size in enumerate((5, 500, 50, 5000)):
        (work / f"f{i}").write_bytes(b"x" * size)
    done = cli(work, "run", "--select", "name,size_bytes", "--where", "type=file", "--where", "size_bytes>=50",
               "--where-json", '[{"field": "name", "op": "prefix", "value": "f"}]',
               "--sort-by", "size_bytes:desc", "--limit", "2", "--", "ls", "-la")
    assert done.returncode == 0, done.stderr
    env = json.loads(done.stdout)
    sizes = sorted((os.lstat(work / f"f{i}").st_size for i in range(4)), reverse=True)
    assert env["stdout"]["parsed"]["entries"] == [{"name": "f3", "size_bytes": sizes[0]},
                                                  {"name": "f1", "size_bytes": sizes[1]}]
    assert env["stdout"]["parsed"]["_summary"]["matched"] == 3


def test_bad_flags_are_refused_with_their_names(work: Path) -> None:  # noqa: F811
    done = cli(work, "run", "--select", "nmae", "--", "ls", "-la")
    assert done.returncode == 1 and json.loads(done.stdout)["failure"]["reason"] == "unknown_field"
    assert "'nmae'" in json.loads(done.stdout)["failure"]["message"]
    done = cli(work, "run", "--where", "size", "--", "ls", "-la")
    assert done.returncode == 2 and "--where 'size'" in done.stderr
    done = cli(work, "run", "--tokenizer", "byte", "--", "ls")
    assert done.returncode == 2 and "need --budget" in done.stderr


@pytest.mark.parametrize("flags, named", [
    (["--select", "name,,size_bytes"], "--select 'name,,size_bytes'"),
    (["--select", "name,"], "--select 'name,'"),
    (["--budget", "3000", "--required-fields", ",name"], "--required-fields ',name'"),
])
def test_an_empty_field_name_is_refused_not_skipped(work: Path, flags: list[str], named: str) -> None:  # noqa: F811
    (work / "ran").unlink(missing_ok=True)
    done = cli(work, "run", *flags, "--", "touch", "ran")
    assert done.returncode == 2 and named in done.stderr and "empty field name" in done.stderr
    assert not (work / "ran").exists()  # refused before anything ran
