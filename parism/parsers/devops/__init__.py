"""Parsers of the 'devops' domain. COMMANDS maps a command name to the module exporting PARSER."""

COMMANDS: dict[str, str] = {
    "kubectl": "parism.parsers.devops.kubectl",
    "docker": "parism.parsers.devops.docker",
    "gh": "parism.parsers.devops.gh",
    "helm": "parism.parsers.devops.helm",
    "terraform": "parism.parsers.devops.terraform",
}
