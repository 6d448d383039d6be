"""The run layer: child environment, sandbox, egress, executor, process trees (docs/architecture.md)."""
