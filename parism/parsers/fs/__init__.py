"""Parsers of the 'fs' domain. COMMANDS maps a command name to the module exporting PARSER."""

COMMANDS: dict[str, str] = {
    "ls": "parism.parsers.fs.ls",
    "df": "parism.parsers.fs.df",
    "du": "parism.parsers.fs.du",
    "find": "parism.parsers.fs.find",
    "stat": "parism.parsers.fs.stat",
    "tree": "parism.parsers.fs.tree",
}
