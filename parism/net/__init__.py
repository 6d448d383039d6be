"""Destinations and URLs: one reading for the guard, the egress proxy and the configuration."""
