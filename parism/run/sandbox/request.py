"""What the sandbox is told about one call: the guard's answer as a frozen record.

The guard (``parism/guard/``) checks a call and fills its ``Decision`` step by step; when the
call is allowed it ends by freezing what the sandbox needs into a :class:`SandboxRequest`
(``Decision.request``). The sandbox reads only this record, never the guard's ``Decision``:
the seam is typed, and nothing the sandbox relies on can change between the check and the
start. Git's pins (the ``.git`` directories kept read-only, the sanitised copies of the
configuration files git reads, the gitlink directories shown sealed) travel in their own
sub-record, :class:`GitPins`, empty for every other command.

The record lives here, in the layer below the guard (``run/``), so that the guard imports it
and the sandbox owns it (docs/architecture.md, "Layers").
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

#: (a file git reads, what the sandbox shows there instead)
FileCopy = tuple[str, bytes]

_EMPTY: Mapping[str, os.stat_result] = MappingProxyType({})
_NO_LIMITS: Mapping[str, int] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class GitPins:
    """Git's part of a call's sandbox (guard/git/): all empty for other commands."""

    #: every ``.git`` under a writable working directory, bound read-only; None: not computed
    #: (read-only project: the working directory's own ``.git`` is found by the sandbox)
    dirs: tuple[str, ...] | None = None
    #: the sanitised copy of each configuration file git will read, bound over the file
    configs: tuple[FileCopy, ...] = ()
    #: gitlink directories git would not enter, shown empty and read-only
    sealed: tuple[str, ...] = ()


NO_GIT = GitPins()


@dataclass(frozen=True, slots=True)
class SandboxRequest:
    """One allowed call as the sandbox needs it (frozen: built once, by the guard)."""

    #: the checked (real) working directory
    cwd: str = ""
    #: what the guard opened to check, by real path: the command runs only in the cwd of this
    #: (st_dev, st_ino); read-only view
    opened: Mapping[str, os.stat_result] = field(default_factory=lambda: _EMPTY)
    #: the command's policy allows the network (and the configuration does not take it)
    network: bool = False
    #: the command's namespace class: isolated | host_procs | host_mounts | host_net
    namespace: str = "isolated"
    #: the policy's bind sources (``~`` expanded by the sandbox against the child's HOME)
    binds: tuple[str, ...] = ()
    #: binds the command cannot work without (refused before it runs when the sandbox cannot give one)
    requires: tuple[str, ...] = ()
    #: the command's resource limits over the configuration's (``[sandbox.limits]`` keys)
    limits: Mapping[str, int] = field(default_factory=lambda: _NO_LIMITS)
    git: GitPins = field(default=NO_GIT)

    def __post_init__(self) -> None:
        # a caller's dict is copied into a read-only view: the record stays what was checked
        if not isinstance(self.opened, MappingProxyType):
            object.__setattr__(self, "opened", MappingProxyType(dict(self.opened)))
        if not isinstance(self.limits, MappingProxyType):
            object.__setattr__(self, "limits", MappingProxyType(dict(self.limits)))
        object.__setattr__(self, "binds", tuple(self.binds))
        object.__setattr__(self, "requires", tuple(self.requires))

    @property
    def network_reachable(self) -> bool:
        """Whether the command sees a network at all (its own, or the host's)."""
        return self.network or self.namespace == "host_net"

    def opened_cwd(self) -> os.stat_result | None:
        """The working directory as the guard opened it."""
        return self.opened.get(self.cwd)
