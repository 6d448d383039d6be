"""kubectl, docker, gh, helm, terraform. None of these can run against a real cluster, engine,
GitHub or cloud here, so the inputs are written from each tool's documented output format
(kubectl/docker/helm/terraform reference docs, gh's non-TTY printers) and every expected value
was checked by hand against the text."""

from __future__ import annotations

import pytest

from parism.parsers import registry

PODS_ALL_NS = """\
NAMESPACE     NAME                                 READY   STATUS             RESTARTS        AGE
kube-system   coredns-5d78c9869d-abcde             1/1     Running            3 (5m ago)      10d
default       web-0                                0/1     CrashLoopBackOff   12 (2m14s ago)  1h
default       job-x                                0/1     Completed          0               3d
"""

PODS_WIDE = """\
NAME    READY   STATUS    RESTARTS   AGE   IP           NODE     NOMINATED NODE   READINESS GATES
web-0   1/1     Running   0          5d    10.244.1.7   node-a   <none>           <none>
"""


def ok(cmd, args, text):
    out = registry.parse(cmd, args, text, "linux")
    assert out.parse_error is None, out.parse_error
    return out.parsed


def test_kubectl_restarts_with_last_restart_and_namespace_column():
    """§22 #36: 'N (Xm ago)' shifted age/ip/node; -A misaligned the columns."""
    pods = ok("kubectl", ["get", "pods", "-A"], PODS_ALL_NS)["pods"]
    assert pods[0] == {"namespace": "kube-system", "name": "coredns-5d78c9869d-abcde",
                       "ready": {"current": 1, "total": 1}, "status": "Running", "restarts": 3,
                       "last_restart": "5m ago", "age": "10d"}
    assert pods[1]["restarts"] == 12 and pods[1]["last_restart"] == "2m14s ago" and pods[1]["age"] == "1h"
    assert pods[2]["status"] == "Completed" and "last_restart" not in pods[2]


def test_kubectl_wide_with_leading_namespace_flag():
    """§22 #36: 'kubectl -n ns get pods' (flags before the subcommand) had no parser."""
    pods = ok("kubectl", ["-n", "prod", "get", "pods", "-o", "wide"], PODS_WIDE)["pods"]
    assert pods[0]["ip"] == "10.244.1.7" and pods[0]["node"] == "node-a" and pods[0]["nominated_node"] is None


def test_kubectl_json_passes_through_and_yaml_hints_json():
    """§22 #36: -o json used to give pods: []."""
    doc = '{"apiVersion": "v1", "items": [{"metadata": {"name": "web-0"}}], "kind": "List"}'
    assert ok("kubectl", ["get", "pods", "-o", "json"], doc)["items"][0]["metadata"]["name"] == "web-0"
    out = registry.parse("kubectl", ["get", "pods", "-o", "yaml"], "apiVersion: v1\nitems: []\n", "linux")
    assert out.parse_error.reason == "unsupported_format"
    assert out.parse_error.hint.args == ["get", "pods", "-o", "json"]


def test_kubectl_other_resources_hint_json():
    out = registry.parse("kubectl", ["get", "deployments"], "NAME READY UP-TO-DATE\nweb 1/1 1\n", "linux")
    assert out.parse_error.reason == "unsupported_format"
    assert out.parse_error.hint.args == ["get", "deployments", "-o", "json"]


def test_kubectl_events():
    text = ("LAST SEEN   TYPE      REASON      OBJECT      MESSAGE\n"
            "2m          Warning   BackOff     pod/web-0   Back-off restarting failed container web in pod web-0\n")
    ev = ok("kubectl", ["get", "events"], text)["events"][0]
    assert ev == {"last_seen": "2m", "type": "Warning", "reason": "BackOff", "object": "pod/web-0",
                  "message": "Back-off restarting failed container web in pod web-0"}


DOCKER_PS = """\
CONTAINER ID   IMAGE          COMMAND                  CREATED        STATUS                     PORTS                  NAMES
4c01db0b339c   nginx:1.25     "/docker-entrypoint.…"   2 hours ago    Up 2 hours                 0.0.0.0:8080->80/tcp   web
d7886598dbe2   redis:7        "docker-entrypoint.s…"   3 days ago     Exited (0) 3 days ago                             cache
"""


def test_docker_ps_columns_with_spaces_and_empty_ports():
    c = ok("docker", ["ps", "-a"], DOCKER_PS)["containers"]
    assert c[0]["status"] == "Up 2 hours" and c[0]["ports"] == "0.0.0.0:8080->80/tcp" and c[0]["names"] == "web"
    assert c[1]["status"] == "Exited (0) 3 days ago" and c[1]["ports"] is None and c[1]["names"] == "cache"
    assert c[1]["command"] == '"docker-entrypoint.s…"'


def test_docker_json_lines_and_inspect_pass_through():
    """§22 #37: docker ps --format json gave containers: []."""
    lines = '{"ID":"4c01db0b339c","Names":"web"}\n{"ID":"d7886598dbe2","Names":"cache"}\n'
    assert ok("docker", ["ps", "--format", "{{json .}}"], lines) == {
        "rows": [{"ID": "4c01db0b339c", "Names": "web"}, {"ID": "d7886598dbe2", "Names": "cache"}]}
    assert ok("docker", ["inspect", "web"], '[{"Id": "4c01"}]') == [{"Id": "4c01"}]


def test_docker_stats_splits_usage_and_limit():
    text = ("CONTAINER ID   NAME   CPU %   MEM USAGE / LIMIT   MEM %   NET I/O        BLOCK I/O       PIDS\n"
            "4c01db0b339c   web    0.15%   7.5MiB / 15.5GiB    0.05%   1.2kB / 0B     0B / 8.19kB     9\n")
    s = ok("docker", ["stats", "--no-stream"], text)["stats"][0]
    assert (s["mem_usage"], s["mem_limit"], s["pids"], s["net_io"]) == ("7.5MiB", "15.5GiB", 9, "1.2kB / 0B")


def test_docker_stats_without_no_stream_is_refused_with_hint():
    out = registry.parse("docker", ["stats"], "CONTAINER ID NAME\n", "linux")
    assert out.parse_error.reason == "unsupported_format" and out.parse_error.hint.args == ["stats", "--no-stream"]


def test_gh_pr_list_non_tty_columns():
    text = "123\tFix: handle \"quotes\"\tfix-quotes\tOPEN\t2026-11-01T10:00:00Z\n"
    assert ok("gh", ["pr", "list"], text)["pull_requests"] == [
        {"number": 123, "title": 'Fix: handle "quotes"', "branch": "fix-quotes", "state": "OPEN",
         "created_at": "2026-11-01T10:00:00Z"}]


def test_gh_issue_list_labels():
    text = "7\tOPEN\tCrash on start\tbug, p1\t2026-11-20T08:00:00Z\n"
    assert ok("gh", ["issue", "list"], text)["issues"][0]["labels"] == ["bug", "p1"]


def test_gh_json_passes_through():
    assert ok("gh", ["pr", "list", "--json", "number,title"], '[{"number": 1, "title": "x"}]') == [
        {"number": 1, "title": "x"}]


def test_helm_list_keeps_row_without_app_version():
    text = ("NAME   \tNAMESPACE\tREVISION\tUPDATED                                \tSTATUS  \tCHART       \tAPP VERSION\n"
            "myapp  \tdefault  \t3       \t2026-11-01 10:00:00.123 +0000 UTC\tdeployed\tmyapp-1.2.0 \t\n"
            "redis  \tcache    \t1       \t2026-10-01 09:00:00.000 +0000 UTC\tfailed  \tredis-18.1.0\t7.2.3\n")
    rel = ok("helm", ["list", "-A"], text)["releases"]
    assert rel[0] == {"name": "myapp", "namespace": "default", "revision": 3,
                      "updated": "2026-11-01 10:00:00.123 +0000 UTC", "status": "deployed",
                      "chart": "myapp-1.2.0", "app_version": None}
    assert rel[1]["app_version"] == "7.2.3"


def test_helm_json_passes_through():
    """§22 #37: helm list -o json never reached native JSON."""
    assert ok("helm", ["list", "-o", "json"], '[{"name":"myapp"}]') == [{"name": "myapp"}]


@pytest.mark.parametrize("text,summary", [
    ("Plan: 2 to add, 1 to change, 0 to destroy.\n", {"to_add": 2, "to_change": 1, "to_destroy": 0}),
    ("Plan: 1 to add, 0 to change, 0 to destroy, 3 to import.\n",
     {"to_add": 1, "to_change": 0, "to_destroy": 0, "to_import": 3}),
])
def test_terraform_plan_summary(text, summary):
    assert ok("terraform", ["plan", "-no-color"], "  # aws_instance.web will be created\n" + text)["summary"] == summary


def test_terraform_no_changes_is_a_result_not_an_error():
    out = ok("terraform", ["plan"], "No changes. Your infrastructure matches the configuration.\n")
    assert out == {"status": "no_changes", "summary": None, "resources": []}
