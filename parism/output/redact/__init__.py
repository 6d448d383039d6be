"""Secret masking before anything downstream sees command output (spec decisions 1, 7).

``Redactor`` masks output and echoes; ``sanitize_capture`` (``parism.output.redact.capture``) turns a run
into shareable fixture text.
"""

from parism.output.redact.redactor import DEFAULT_MARKER, Masked, Redactor, validate_output_patterns

__all__ = ["DEFAULT_MARKER", "Masked", "Redactor", "validate_output_patterns"]
