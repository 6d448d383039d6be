"""git's reading of the repositories a call touches: config, cache, sanitised copies, .git dirs."""
