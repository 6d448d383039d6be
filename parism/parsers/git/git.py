"""``git``: one dispatching parser. Leading global options (``-C <dir>``, ``--no-pager``,
``-c k=v``, ``--git-dir=``, ``--work-tree=``) are skipped, then the subcommand words choose the
sub-parser (``status``, ``log``, ``diff``, ``show``, ``branch``, ``rev-parse``, ``ls-files``,
``remote``, ``tag``, ``describe``, ``shortlog``). Any other subcommand is ``unsupported_format``.
"""

from __future__ import annotations

from parism.parsers.contract import Contract, Parser
from parism.parsers.git import branch
from parism.parsers.git import diff
from parism.parsers.git import log
from parism.parsers.git import misc
from parism.parsers.git import status

LEADING_FLAGS = {
    "-C": "path", "-c": "value", "--git-dir": "path", "--work-tree": "path", "--no-pager": "bool",
    "-P": "bool", "--no-optional-locks": "bool", "--literal-pathspecs": "bool", "--no-replace-objects": "bool",
}

PARSER = Parser(
    id="git",
    contract=Contract(),
    leading_flags=LEADING_FLAGS,
    subcommands={
        "status": status.PARSER,
        "log": log.PARSER,
        "diff": diff.PARSER,
        "show": diff.SHOW_PARSER,
        "branch": branch.PARSER,
        **misc.SUBCOMMANDS,
    },
    examples=(("-C", "repo", "log", "-n", "5"),),
)
