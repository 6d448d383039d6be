"""Parsers of the 'text' domain. COMMANDS maps a command name to the module exporting PARSER."""

COMMANDS: dict[str, str] = {
    name: f"parism.parsers.text.{name}" for name in ("grep", "wc", "head", "tail", "cat")
}
