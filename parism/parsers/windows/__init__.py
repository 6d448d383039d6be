"""Parsers of the 'windows' domain. COMMANDS maps a command name to the module exporting PARSER."""

COMMANDS: dict[str, str] = {
    "dir": "parism.parsers.windows.dir",
    "ipconfig": "parism.parsers.windows.ipconfig",
    "systeminfo": "parism.parsers.windows.systeminfo",
    "tasklist": "parism.parsers.windows.tasklist",
}
