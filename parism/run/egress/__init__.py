"""The only way out of a sandbox whose command may use the network (docs/security.md, "Network").

``_netns.py``: the namespace step before bwrap; ``proxy.py``: the egress proxy and DNS relay.
Which destinations may be reached is ``parism/net/destinations.py`` (shared with the guard's argv
check and the configuration).
"""
