"""The only way out of a sandbox whose command may use the network (docs/security.md, "Network").

``policy.py``: which destinations may be reached (shared with the guard's argv check).
"""
