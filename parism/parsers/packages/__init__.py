"""Parsers of the 'packages' domain. COMMANDS maps a command name to the module exporting PARSER."""

COMMANDS: dict[str, str] = {}
