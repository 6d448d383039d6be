"""The deployment manifests of docs/deploy/ say what their pages promise (validated offline).

Parsed with a YAML reader; each field the hardened `docker run` line has must have its
counterpart, and the run-line's values (uid, limits, seccomp file) must agree with
``parism.appliance.run_line`` so the three forms cannot drift apart.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from parism.appliance import IMAGE_UID, run_line

DEPLOY = Path(__file__).resolve().parents[2] / "docs" / "deploy"


def _flag(argv: list[str], name: str) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == name]


def test_pod_is_the_hardened_line() -> None:
    pod = yaml.safe_load((DEPLOY / "parism-pod.yaml").read_text())
    assert pod["apiVersion"] == "v1" and pod["kind"] == "Pod"
    spec = pod["spec"]
    assert spec["hostUsers"] is False  # procMount Unmasked is accepted only with a pod userns
    assert spec["automountServiceAccountToken"] is False
    psc = spec["securityContext"]
    assert psc["runAsNonRoot"] is True and psc["runAsUser"] == IMAGE_UID and psc["runAsGroup"] == IMAGE_UID
    assert psc["seccompProfile"] == {"type": "Localhost", "localhostProfile": "profiles/parism-seccomp.json"}
    (c,) = [c for c in spec["containers"] if c["name"] == "parism"]
    assert c["stdin"] is True and c["tty"] is False
    sc = c["securityContext"]
    assert sc["allowPrivilegeEscalation"] is False and sc["readOnlyRootFilesystem"] is True
    assert sc["capabilities"]["drop"] == ["ALL"] and sc["procMount"] == "Unmasked"
    limits = c["resources"]["limits"]
    assert limits["memory"] == "1Gi" and "cpu" in limits
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    assert mounts["/workspace"]["readOnly"] is True and c["workingDir"] == "/workspace"
    vols = {v["name"]: v for v in spec["volumes"]}
    tmp = vols[mounts["/tmp"]["name"]]["emptyDir"]
    assert tmp["medium"] == "Memory" and tmp["sizeLimit"] == "64Mi"
    assert {"name": "PARISM_SANDBOX", "value": "required"} in c["env"]


def test_compose_is_the_hardened_line() -> None:
    svc = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]["parism"]
    argv = run_line(workspace="/p", seccomp="/s.json").argv
    assert svc["stdin_open"] is True and svc["tty"] is False and svc["init"] is True
    assert svc["read_only"] is True and svc["cap_drop"] == ["ALL"]
    assert svc["tmpfs"] == _flag(argv, "--tmpfs")
    assert set(svc["security_opt"]) == {"no-new-privileges:true", "seccomp=./parism-seccomp.json",
                                        "systempaths=unconfined"}
    assert svc["network_mode"] == _flag(argv, "--network")[0] == "none"
    assert str(svc["pids_limit"]) == _flag(argv, "--pids-limit")[0]
    assert svc["mem_limit"] == _flag(argv, "--memory")[0] and svc["memswap_limit"] == _flag(argv, "--memory-swap")[0]
    assert svc["user"] == _flag(argv, "--user")[0] == f"{IMAGE_UID}:{IMAGE_UID}"
    assert svc["volumes"] == ["./project:/workspace:ro"] and svc["working_dir"] == "/workspace"


def test_pages_name_what_the_manifests_hold() -> None:
    k8s = (DEPLOY / "kubernetes.md").read_text()
    for needle in ("/var/lib/kubelet/seccomp/profiles/parism-seccomp.json", "kubectl exec -i",
                   "podPidsLimit", "hostUsers: false", "parism policy seccomp", "What could not be tested"):
        assert needle in k8s, needle
    compose = (DEPLOY / "compose.md").read_text()
    assert "docker compose run --rm -T parism" in compose and "Not tested here" in compose
