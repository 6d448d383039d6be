"""The wire layer: every wire model, the call options, the echo bounds (docs/architecture.md)."""
