"""Parsers of the 'env' domain. COMMANDS maps a command name to the module exporting PARSER."""

COMMANDS: dict[str, str] = {name: f"parism.parsers.env.{name}" for name in ("env", "pwd", "which")}
