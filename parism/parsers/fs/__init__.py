"""Parsers of the 'fs' domain. COMMANDS maps a command name to the module exporting PARSER."""

COMMANDS: dict[str, str] = {
    "ls": "parism.parsers.fs.ls",
}
