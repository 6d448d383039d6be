"""Parser packs belong to the engine whose configuration names them (issue #24): two engines
with two configurations in one process each parse with their own packs, and an engine without
packs has none, whichever engine was built last. The packs are real workers under bubblewrap;
the value each returns is checked against the real command (``rev`` of a file, reversed here).

The armed control is the order: engine ``a`` is built first, so with one process-wide pack
table (the last engine built decides) its call would be parsed by ``b``'s pack, or by none.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from parism.engine import Engine, create_engine

TEXT = "abc\nhello world\n"

PACK = """
    from parism.types import ParserPack  # the path pack authors use (docs/parser-packs.md)

    def parse(raw, args, ctx):
        return {{"lines": raw.splitlines(), "by": "{who}"}}

    PACK = ParserPack(name="rev", parse=parse, accepted_positionals={{"max": 1}})
"""


def config(tmp_path: Path, who: str, work: Path, with_pack: bool) -> str:
    """A configuration allowing ``rev`` in ``work``, with a pack directory of its own (or none)."""
    base = tmp_path / who
    packs = base / "packs"
    (packs / "rev").mkdir(parents=True)
    if with_pack:
        (packs / "rev" / "parser.py").write_text(textwrap.dedent(PACK.format(who=who)))
    for d in (base, packs, packs / "rev"):
        d.chmod(0o755)
    path = base / "c.toml"
    path.write_text(textwrap.dedent(f"""\
        [guard]
        allowed_commands = ["rev"]
        allowed_paths = ["{work}"]
        [guard.command_policies.rev]
        positionals = "any"
        [parsers]
        pack_paths = ["{packs}"]
        external_time_limit_ms = 10000  # a loaded CI machine
    """))
    return str(path)


@pytest.fixture
def engines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    tmp_path.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir(mode=0o755)
    (work / "in.txt").write_text(TEXT)
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.parism/parsers of the machine's
    monkeypatch.chdir(work)
    built: dict[str, Engine] = {}
    try:
        for who, with_pack in (("a", True), ("b", True), ("none", False)):  # "none" is built last
            built[who] = create_engine(config(tmp_path, who, work, with_pack))
        yield built, work
    finally:
        for engine in built.values():
            engine.close()


def reversed_lines() -> list[str]:
    return [line[::-1] for line in TEXT.splitlines()]


def test_each_engine_parses_with_its_own_packs(engines) -> None:
    built, work = engines
    for who in ("a", "b"):
        env = built[who].run("rev", ["in.txt"], cwd=str(work), format="json").to_wire()
        assert env["exitCode"] == 0, env
        assert env["stdout"]["raw"] == "".join(line + "\n" for line in reversed_lines())
        assert env["stdout"]["parsed"] == {"lines": reversed_lines(), "by": who}, (who, env)


def test_an_engine_without_packs_has_none_though_others_do(engines) -> None:
    built, work = engines
    env = built["none"].run("rev", ["in.txt"], cwd=str(work), format="json").to_wire()
    assert env["exitCode"] == 0, env
    assert env["stdout"].get("parsed") is None
    assert env.get("failure") is None and env["stdout"]["parse_error"]["reason"] == "parser_not_found", env
    assert "rev" not in built["none"].describe().available_parsers
    assert "rev" in built["a"].describe().available_parsers  # built before "none": still its own
