"""Helpers for the sandbox containment tests (tests/security/test_sandbox_*.py)."""
