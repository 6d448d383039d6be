"""Parsers of the 'network' domain. COMMANDS maps a command name to the module exporting PARSER."""

COMMANDS: dict[str, str] = {
    "ping": "parism.parsers.network.ping",
    "ping6": "parism.parsers.network.ping",
    "curl": "parism.parsers.network.curl",
    "netstat": "parism.parsers.network.netstat",
    "lsof": "parism.parsers.network.lsof",
    "ss": "parism.parsers.network.ss",
    "dig": "parism.parsers.network.dig",
}
