"""The output layer: redaction, shaping, paging and the envelope shapes (docs/architecture.md)."""
