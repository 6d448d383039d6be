"""The only way out of a sandbox whose command may use the network (docs/security.md, "Network").

``policy.py``: which destinations may be reached (shared with the guard's argv check);
``_netns.py``: the namespace step before bwrap; ``proxy.py``: the egress proxy and DNS relay.
"""
