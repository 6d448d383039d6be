"""Parsers of the 'system' domain. COMMANDS maps a command name to the module exporting PARSER."""

COMMANDS: dict[str, str] = {
    "free": "parism.parsers.system.free",
    "uname": "parism.parsers.system.uname",
    "id": "parism.parsers.system.id",
    "systemctl": "parism.parsers.system.systemctl",
    "journalctl": "parism.parsers.system.journalctl",
    "lsblk": "parism.parsers.system.lsblk",
}
