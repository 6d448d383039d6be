"""Parsers of the 'process' domain. COMMANDS maps a command name to the module exporting PARSER."""

COMMANDS: dict[str, str] = {
    "ps": "parism.parsers.process.ps",
    "kill": "parism.parsers.process.kill",
}
