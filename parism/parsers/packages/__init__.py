"""Parsers of the 'packages' domain. COMMANDS maps a command name to the module exporting PARSER."""

COMMANDS: dict[str, str] = {
    "npm": "parism.parsers.packages.npm",
    "pnpm": "parism.parsers.packages.pnpm",
    "yarn": "parism.parsers.packages.yarn",
    "cargo": "parism.parsers.packages.cargo",
    "apt": "parism.parsers.packages.apt",
    "brew": "parism.parsers.packages.brew",
}
