"""Parsers of the 'git' domain. COMMANDS maps a command name to the module exporting PARSER."""

COMMANDS: dict[str, str] = {"git": "parism.parsers.git.git"}
