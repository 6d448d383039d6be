"""The bound of every string, list, table and number a configuration layer can set.

A configured value is read by the guard, the redactor and the sandbox on every call; an
unbounded one is a way for a project file to make every answer huge or every call slow (a
100 KB ``redaction_marker`` turned 1.5 KB of output into a 40 MB answer). Each bound is checked
when the configuration loads, by the models in :mod:`parism.config.model`: a value past it is a
configuration error naming the key and the bound (``invalid_config``), never cut or ignored.
docs/configuration.md and docs/security.md list them; tests/unit/config/test_bounds.py walks the
models and fails for a field without one.
"""

from typing import Annotated

from pydantic import Field

#: ``guard.secrets.redaction_marker``: what every masked secret becomes.
MARKER_CHARS = 64
#: A name: a command, a flag, a subcommand word, an environment variable, a table key.
NAME_CHARS = 128
#: A pattern or a value: a regular expression, a block pattern, an allowed or denied value.
PATTERN_CHARS = 1024
#: A sentence shown to the agent (a ``never_ends`` or ``requires`` hint).
TEXT_CHARS = 1024
#: A path (PATH_MAX).
PATH_CHARS = 4096
#: A ``sandbox.network_allow`` entry: a host name (253) or CIDR with a port.
DESTINATION_CHARS = 300

#: Entries of one list or table.
ITEMS = 256
#: Regular expressions of ``guard.secrets.output_patterns``: each runs over every output.
PATTERNS = 256
#: Commands of one profile or of ``guard.command_policies``.
COMMANDS = 512

Name = Annotated[str, Field(max_length=NAME_CHARS)]
Pattern = Annotated[str, Field(max_length=PATTERN_CHARS)]
Text = Annotated[str, Field(max_length=TEXT_CHARS)]
PathText = Annotated[str, Field(max_length=PATH_CHARS)]
Destination = Annotated[str, Field(max_length=DESTINATION_CHARS)]

# numbers (upper bounds; the lower ones are in the models)
DAY_MS = 86_400_000
GIB = 1 << 30
MAX_ROWS = 1_000_000
