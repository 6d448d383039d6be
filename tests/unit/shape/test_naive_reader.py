"""The default answer read by someone who knows no rule (issue #26): zip each row with the
schema, overlay ``same``, and you have the ``format: "json"`` rows, field by field.

Run on every parser's real outputs: the project's fixtures (``tests/fixtures``), outputs the
tests make with the real programs (a git repository with every change kind, a text tree: git
status/diff/log, grep, cat, wc, find, ls, ps, df, free), and the shared corpus
(``../shared/corpus/jc``); then on hypothesis' rows.  What is checked, per table:

- every row has exactly one cell per ``schema`` name; ``same`` and ``schema`` share no name;
- the columns are in the parser's declared order (its ``row_fields``, then the rest
  alphabetically): never an order the data chose;
- ``{**same, **zip(schema, row)}`` equals the json row field by field, compared as JSON
  (``1``, ``1.0``, ``true`` differ); a ``null`` cell is a null or absent field, nothing else; a
  field the json row has and the table lacks is one the parser derives from a field the row
  shows (``lean.DERIVED``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parism.parsers import registry
from parism.output.shape import lean, shape

ROOT = Path(__file__).resolve().parents[3]
CORPUS = Path(os.environ.get("PARISM_CORPUS", ROOT.parent / "shared" / "corpus" / "jc"))
FAMILY = {"linux": "linux", "macos": "macos", "freebsd": "freebsd", "windows": "windows"}


def _saved() -> list[tuple[str, list[str], str, str]]:
    """(name, argv, os, text) of the fixtures and of every corpus output with an argv."""
    out = []
    for path in sorted((ROOT / "tests" / "fixtures").glob("*/*/*.json")):
        meta = json.loads(path.read_text())
        if meta.get("argv") and path.with_suffix(".out").exists():
            out.append((f"{path.parent.name}/{path.stem}", meta["argv"], meta.get("os", "linux"),
                        path.with_suffix(".out").read_bytes().decode("utf-8", "replace")))
    manifest = CORPUS / "manifest.json"
    assert manifest.exists(), f"corpus missing at {CORPUS} (set PARISM_CORPUS)"
    for e in json.loads(manifest.read_text())["entries"]:
        if e["argv"]:
            out.append((f"corpus:{e['id']}", e["argv"], FAMILY.get(e["os_family"], "linux"),
                        (CORPUS / e["files"]["out"]).read_bytes().decode("utf-8", "replace")))
    return out


ENV = {"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "TZ": "UTC", "PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1",
       "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": "/nonexistent", "GIT_PAGER": "cat", "PAGER": "cat", "NO_COLOR": "1",
       "TERM": "dumb"}


def _live(root: Path) -> list[tuple[str, list[str], str, str]]:
    """Outputs of the real programs on trees built here (the git parsers' repository)."""
    from tests.parsers.git.gitrepo import build

    (root / "git").mkdir()
    work = build(root / "git")
    text = root / "text"
    (text / "sub").mkdir(parents=True)
    for i in range(6):
        (text / ("sub" if i % 2 else ".") / f"f{i}.py").write_text(
            "".join(f"def f{i}_{j}(x):\n    return x + {j}  # note: {j}\n" for j in range(i + 2)))
    (text / "README").write_text("one line\n\nthree: lines\n")
    calls = [(work, ["git", "status"]), (work, ["git", "diff"]), (work, ["git", "diff", "--cached"]),
             (work, ["git", "log", "-n", "5"]), (work, ["git", "status", "--porcelain"]),
             (text, ["grep", "-rn", "return", "."]), (text, ["grep", "-rn", "note", "sub", "f0.py"]),
             (text, ["cat", "f0.py"]), (text, ["wc", "-l", "f0.py", "f2.py", "README"]),
             (text, ["find", ".", "-name", "*.py"]), (text, ["ls", "-la"]), (text, ["ps", "aux"]),
             (text, ["df", "-h"]), (text, ["free", "-m"])]
    out = []
    for cwd, argv in calls:
        done = subprocess.run(argv, cwd=cwd, env=ENV, capture_output=True, stdin=subprocess.DEVNULL, timeout=30)
        out.append((f"live:{' '.join(argv)}", argv, "linux", done.stdout.decode("utf-8", "replace")))
    return out


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, list[str], str, str]]:
    return _saved() + _live(tmp_path_factory.mktemp("naive"))


def same_json(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def naive_rows(table: dict[str, Any]) -> list[dict[str, Any]]:
    """The reading of a table that needs no rule beyond its own names."""
    schema, same = table["schema"], table.get("same", {})
    assert not set(schema) & set(same), (schema, same)
    assert set(table) <= {"schema", "same", "rows"}, sorted(table)
    out = []
    for row in table["rows"]:
        assert isinstance(row, list) and len(row) == len(schema), (schema, row)
        out.append({**same, **dict(zip(schema, row))})
    return out


def check_row(naive: dict[str, Any], full: dict[str, Any], derived: dict[str, str], where: str) -> None:
    for name in set(naive) | set(full):
        got, want = naive.get(name), full.get(name)
        if name not in naive and want is not None:
            source = derived.get(name)
            assert source is not None and full.get(source) is not None, f"{where}: {name} left out ({want!r})"
            continue
        assert same_json(got, want), f"{where}: {name} reads {got!r}, json has {want!r}"


def check_answer(default: Any, full: Any, parser_id: str, row_fields: tuple[str, ...], rows_key: str | None,
                 where: str) -> int:
    """``default``: the default answer's ``stdout.parsed``, ``full``: ``format: "json"``'s.  The
    number of tables read."""
    derived = lean.DERIVED.get(parser_id, {})
    if not isinstance(full, dict):
        assert same_json(default, full), where
        return 0
    assert isinstance(default, dict) and list(default) == list(full), (where, list(default), list(full))
    tables = 0
    for key, value in full.items():
        got = default[key]
        if isinstance(got, dict) and "schema" in got and "rows" in got and isinstance(value, list):
            tables += 1
            names = got["schema"]
            expected_order = lean.order(names, row_fields if key == rows_key else ())
            assert names == expected_order, f"{where}: /{key} columns {names}, declared order {expected_order}"
            rows = naive_rows(got)
            assert len(rows) == len(value), where
            for i, (naive, row) in enumerate(zip(rows, value)):
                check_row(naive, row, derived, f"{where} /{key}/{i}")
        elif isinstance(value, list) and value and all(isinstance(r, dict) for r in value):
            assert isinstance(got, list) and len(got) == len(value), where
            for i, (naive, row) in enumerate(zip(got, value)):
                check_row(naive, row, derived, f"{where} /{key}/{i}")
        else:
            assert same_json(got, value), f"{where}: /{key} differs"
    return tables


def test_the_naive_reading_is_the_json_answer_on_every_real_output(cases: list) -> None:
    seen: dict[str, int] = {}
    for name, argv, os_name, text in cases:
        outcome = registry.parse(argv[0], argv[1:], text, os_name)
        parser = outcome.parser
        if parser is None or outcome.parsed is None or outcome.parse_error is not None:
            continue
        full = shape(outcome.parsed, requested="json", rows_key=parser.rows_key, max_items=0, thresholds=None)
        default = shape(outcome.parsed, requested=None, rows_key=parser.rows_key, max_items=0, thresholds=None,
                        parser=parser, args=argv[1:], text=text)
        if default.parsed is None:  # raw alone (cat): nothing to read but raw
            assert default.keep_raw, name
            continue
        tables = check_answer(default.parsed, full.parsed, parser.id, parser.row_fields, parser.rows_key, name)
        seen[parser.id] = seen.get(parser.id, 0) + tables
    # every parser of the eleven commands was read, most of them as tables
    assert {"ls", "ps", "git-log", "git-status", "git-diff", "df", "free", "find", "grep", "wc"} <= set(seen), seen
    assert sum(1 for n in seen.values() if n) >= 15, seen


def test_the_raw_alone_parsers_keep_raw_and_send_no_parse(cases: list) -> None:
    for name, argv, os_name, text in cases:
        if argv[0] != "cat":
            continue
        outcome = registry.parse(argv[0], argv[1:], text, os_name)
        default = shape(outcome.parsed, requested=None, rows_key=outcome.parser.rows_key, max_items=0,
                        thresholds=None, parser=outcome.parser, args=argv[1:], text=text)
        assert default.parsed is None and default.keep_raw and text.strip(), name
        return
    pytest.fail("no cat output among the cases")


def test_an_order_the_data_would_choose_is_not_taken() -> None:
    """The old form put the columns with fewer gaps first: ``size_bytes`` moved ahead of ``name``
    when some rows lacked a name.  Declared order: the same columns in the same order."""
    a = [{"name": "x", "size_bytes": 1, "owner": "a"}, {"name": "y", "size_bytes": 2, "owner": "b"}]
    b = [{"size_bytes": 1, "owner": "a"}, {"name": "y", "size_bytes": 2, "owner": "b"}, {"size_bytes": 3, "owner": "c"}]
    fields = ("name", "owner", "size_bytes")
    assert lean.lean({"entries": a}, "x", fields, "entries")["entries"]["schema"] == ["name", "owner", "size_bytes"]
    assert lean.lean({"entries": b}, "x", fields, "entries")["entries"]["schema"] == ["name", "owner", "size_bytes"]


def test_the_usual_value_is_shown_in_every_row() -> None:
    """0 of 15 ls rows showed a directory mode in the old form; here every row shows its own."""
    rows = [{"name": f"d{i}", "mode": "drwxr-xr-x"} for i in range(5)] + [{"name": "f", "mode": "-rw-r--r--"}]
    table = lean.lean({"entries": rows}, "x", ("name", "mode"), "entries")["entries"]
    assert table == {"schema": ["name", "mode"], "rows": [[r["name"], r["mode"]] for r in rows]}
    assert sum(1 for r in naive_rows(table) if r["mode"].startswith("d")) == 5


def test_a_value_every_row_shares_moves_to_same_and_nothing_else_does() -> None:
    rows = [{"name": "a", "owner": "root", "n": 1}, {"name": "b", "owner": "root", "n": True},
            {"name": "c", "owner": "root", "n": 1.0}]
    table = lean.lean({"entries": rows}, "x", (), "entries")["entries"]
    assert table == {"schema": ["n", "name"], "same": {"owner": "root"}, "rows": [[1, "a"], [True, "b"], [1.0, "c"]]}


def test_the_check_catches_a_table_that_implies_a_value() -> None:
    """Armed trap: the old ``{schema, default, rows}`` reading (a null cell = the default) fails
    the naive check — the check can fail."""
    full = {"entries": [{"name": "a", "mode": "d"}, {"name": "b", "mode": "d"}, {"name": "c", "mode": "-"}]}
    old = {"entries": {"schema": ["name", "mode"], "default": {"mode": "d"}, "rows": [["a"], ["b"], ["c", "-"]]}}
    with pytest.raises(AssertionError):
        check_answer(old, full, "x", ("name", "mode"), "entries", "old form")
    implied = {"entries": {"schema": ["name", "mode"], "rows": [["a", None], ["b", None], ["c", "-"]]}}
    with pytest.raises(AssertionError):
        check_answer(implied, full, "x", ("name", "mode"), "entries", "null as a default")
    check_answer(lean.lean(full, "x", ("name", "mode"), "entries"), full, "x", ("name", "mode"), "entries", "new")


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.0, -0.0, 1.0, 2.5]),
                    st.sampled_from(["", "a", "b", "root", "1"]))
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=2), st.dictionaries(st.sampled_from(["k", "j"]), SCALARS,
                                                                           max_size=2))
ROWS = st.lists(st.dictionaries(st.sampled_from(["name", "mode", "owner", "size", "target", "type", "zeta"]), VALUES,
                                max_size=6), min_size=0, max_size=8)


@settings(max_examples=400, deadline=None)
@given(ROWS, st.lists(st.sampled_from(["size", "name", "owner", "mode"]), unique=True, max_size=4),
       st.sampled_from(["x", "ls", "git-status"]))
def test_the_naive_reading_of_any_rows(rows: list[dict[str, Any]], declared: list[str], parser_id: str) -> None:
    full = {"entries": rows, "other": rows[:1]}
    value = lean.lean(full, parser_id, tuple(declared), "entries")
    check_answer(value, full, parser_id, tuple(declared), "entries", "hypothesis")
    assert json.loads(json.dumps(value)) == value  # plain JSON
