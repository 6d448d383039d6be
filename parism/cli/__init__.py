"""Command-line interface: ``parism`` serves MCP on stdio; subcommands print the same envelopes."""
