"""One home per command (issue #24): the per-command facts live on the parser
(``Parser.informative_exits``, ``evidence``, ``lean``) and the central tables are
derived from the registry. The expected tables are the ones those modules held by hand before
the move (f4aedb0), written out again here, so a fact lost or changed on its way to a parser
fails."""

from __future__ import annotations

from parism.output import envelopes
from parism.output.shape import lean, restate
from parism.parsers import registry
from parism.results import evidence



def test_informative_exits_are_the_old_table() -> None:
    assert envelopes.INFORMATIVE_EXITS == {
        "grep": {1: "no line matched"}, "egrep": {1: "no line matched"}, "fgrep": {1: "no line matched"},
        "rg": {1: "no line matched"}, "diff": {1: "the inputs differ"}, "cmp": {1: "the inputs differ"},
        "systemctl": {3: "the unit is not active"},
    }
    assert envelopes.informative_exit("grep", 1) == "no line matched"
    assert envelopes.informative_exit("grep", 2) is None and envelopes.informative_exit("ls", 1) is None
    assert envelopes.informative_exit("cmp", 1) == "the inputs differ"


def test_evidence_providers_are_the_old_set() -> None:
    assert evidence.PROVIDERS == {
        "ls", "df", "du", "free", "ps", "netstat", "ss", "lsof", "git-status", "git-log", "git-branch",
        "systemctl-list-units", "systemctl-list-unit-files", "docker-ps", "kubectl-get", "helm-list",
        "wc", "env", "id", "stat", "find", "grep",
    } | {"lsblk"}  # added with docs/adding-a-parser.md


def test_lean_tables_are_the_old_ones() -> None:
    assert lean.DERIVED == {
        "ls": {"type": "mode", "file_kind": "mode", "permissions": "mode", "mode_octal": "mode", "setuid": "mode",
               "setgid": "mode", "sticky": "mode", "modified_at": "modified_raw", "size_bytes_approx": "size",
               "accessed_at": "accessed_raw", "changed_at": "changed_raw", "birth_at": "birth_raw"},
        "git-log": {"date_iso": "date", "commit_date_iso": "commit_date"},
        "df": {"size_bytes_approx": "size", "used_bytes_approx": "used", "available_bytes_approx": "available"},
        "git-status": {"index": "xy", "worktree": "xy"},
    }
    assert restate.partial_with("git-log") == (
        "--stat", "-p", "--patch", "-u", "--numstat", "--name-status", "--name-only", "--raw", "--graph", "--cc",
        "--full-diff", "--notes", "--show-notes")
    assert restate.partial_with("ls") == () and restate.partial_with("pack:ls") == ()
    assert lean.derived_of("pack:ls") == {} and lean.derived_of(None) == {} and lean.derived_of("grep") == {}


def test_every_parser_id_is_found_by_its_command_prefix() -> None:
    """``registry.by_id`` imports only the command named by the id's prefix; an id that does not
    start with its command's name would be invisible to the lean answer."""
    for cmd, top in registry.command_parsers():
        for parser in registry.walk(top):
            found = registry.by_id(parser.id)
            assert found is not None and found.id == parser.id, (cmd, parser.id)
            assert (found.lean, found.evidence) == (parser.lean, parser.evidence), (cmd, parser.id)


def test_facts_of_a_dispatcher_are_on_its_top_level_parser_only() -> None:
    """``informative_exits`` are read per command, so a subcommand's would be
    silently ignored."""
    for cmd, top in registry.command_parsers():
        for parser in registry.walk(top):
            if parser is not top:
                assert not parser.informative_exits, (cmd, parser.id)
