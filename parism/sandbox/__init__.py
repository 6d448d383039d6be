"""Kernel confinement (bubblewrap). PLACEHOLDER interface until the sandbox lands:
``launcher`` returns None, which makes the executor spawn directly."""

from __future__ import annotations

from typing import Any


class Sandbox:
    @classmethod
    def from_config(cls, cfg: Any) -> "Sandbox":
        return cls()

    def status(self) -> dict[str, Any]:
        return {"engine": None, "version": None, "mode": "off", "level": "none",
                "reason": "sandbox not implemented yet", "features": {}, "limits": {}, "uid": None}

    def launcher(self, decision: Any, spec: Any) -> Any:
        """A Launcher for this call, None for a direct spawn, or an envelope ``Failure``."""
        return None
