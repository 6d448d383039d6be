"""Built-in parsers, one small module per command, grouped by domain (see ``registry``)."""
