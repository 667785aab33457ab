"""The `workloads` section: Shoal's own fields, Kubernetes manifests, bounds, references, export."""

from __future__ import annotations

import textwrap

import pytest

from shoal.documents import cluster_from_tree, load_cluster
from shoal.documents.export import to_document
from shoal.model import InvalidDocument, Inventory, Problem
from shoal.model.software import LiteralInput, MemberFactsInput, SecretInput
from shoal.model.workloads import (
    ProbeKind,
    RestartPolicy,
    TemplateKind,
    WorkloadRuleKind,
    WorkloadScope,
)

BASE = """
name: c
parameters:
  pw: {type: string, hidden: true, default: sekrit-value}
  image: {type: string, default: localhost/busybox:shoal}
profiles:
  p: {type: server, flavor: m1.small, image: cirros}
node_groups:
  - {name: ctl, profile: p, count: 3, labels: {role: controller}}
software:
  configs:
    setup: {group: script, config: "true"}
  deployments:
    prepare: {config: setup, target: ctl}
"""

NATIVE = """
api:
  replicas: 3
  min: 1
  max: 6
  depends_on: [prepare, db]
  containers:
    - name: api
      image: {param: image}
      command: [httpd, -f, -p, "8080"]
      env: {PW: {secret: pw}, DB: {members: db}, N: 1}
      ports: [8080]
      resources: {cpu: 0.25, memory_mb: 64}
      liveness: {http: /healthz, port: 8080, period_s: 5, failure_threshold: 2}
      readiness: {tcp: 8080}
  restart: on-failure
  rules:
    - {rule: anti-affinity, scope: host}
    - {rule: spread, scope: zone, max_skew: 1}
    - {rule: affinity, scope: zone, against: db}
  max_per_node: 1
  nodes: {groups: [ctl], labels: {role: controller}}
  update: {max_unavailable: 0, max_surge: 2}
db:
  template:
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: db}
    spec:
      replicas: 2
      selector: {matchLabels: {app: db}}
      strategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 0, maxSurge: 1}}
      template:
        metadata: {labels: {app: db}}
        spec:
          restartPolicy: Always
          nodeSelector: {role: controller}
          containers:
            - name: db
              image: localhost/busybox:shoal
              args: [sleep, "3600"]
              env: [{name: MODE, value: primary}]
              ports: [{containerPort: 5432, name: pg}]
              resources: {requests: {cpu: 500m, memory: 128Mi}, limits: {cpu: "1"}}
              livenessProbe: {tcpSocket: {port: 5432}, periodSeconds: 5}
              readinessProbe: {exec: {command: ["true"]}, initialDelaySeconds: 2}
"""


def doc(workloads: str, base: str = BASE) -> str:
    return base + "workloads:\n" + textwrap.indent(textwrap.dedent(workloads), "  ")


def problems(inventory: Inventory, text: str) -> list[Problem]:
    with pytest.raises(InvalidDocument) as caught:
        load_cluster(text, inventory)
    return caught.value.problems


def test_native_and_manifest_workloads_are_read(inventory: Inventory) -> None:
    spec = load_cluster(doc(NATIVE), inventory)
    api, db = spec.workloads
    assert (api.replicas, api.min_replicas, api.max_replicas) == (3, 1, 6)
    c = api.containers[0]
    assert c.image == "localhost/busybox:shoal" and c.cpu_milli == 250 and c.memory_mb == 64
    assert c.env["PW"] == SecretInput("pw") and isinstance(c.env["DB"], MemberFactsInput)
    assert c.liveness is not None and c.liveness.kind is ProbeKind.HTTP
    assert c.liveness.failure_threshold == 2 and c.readiness is not None
    assert api.restart is RestartPolicy.ON_FAILURE and api.max_per_node == 1
    assert api.rules[0].rule is WorkloadRuleKind.ANTI_AFFINITY
    assert api.rules[0].scope is WorkloadScope.HOST and api.rules[2].against == "db"
    assert api.depends_on == ("prepare", "db") and api.update.max_surge == 2
    assert db.kind is TemplateKind.DEPLOYMENT and db.replicas == 2
    assert db.containers[0].cpu_milli == 500 and db.containers[0].memory_mb == 128
    assert db.containers[0].env["MODE"] == LiteralInput("primary")
    assert db.selector.labels == {"role": "controller"} and db.update.max_unavailable == 0
    assert spec.software.secrets == {"pw": "sekrit-value"}


def test_export_loads_back_to_the_same_workloads(inventory: Inventory) -> None:
    spec = load_cluster(doc(NATIVE), inventory)
    again = cluster_from_tree(to_document(spec), inventory)
    assert again.workloads == spec.workloads
    assert again.software.secrets == spec.software.secrets


def test_a_pod_manifest_is_a_template(inventory: Inventory) -> None:
    spec = load_cluster(
        doc("""
        web:
          replicas: 2
          template:
            apiVersion: v1
            kind: Pod
            metadata: {name: web}
            spec:
              containers: [{name: web, image: img, ports: [{containerPort: 80}]}]
        """),
        inventory,
    )
    assert spec.workloads[0].kind is TemplateKind.POD and spec.workloads[0].ports == {80}


def test_manifest_fields_without_a_meaning_here_are_refused_by_name(inventory: Inventory) -> None:
    found = problems(
        inventory,
        doc("""
        web:
          replicas: 1
          template:
            apiVersion: v1
            kind: Pod
            spec:
              affinity: {}
              hostNetwork: false
              volumes: []
              containers:
                - name: web
                  image: img
                  securityContext: {privileged: true}
                  ports: [{containerPort: 80, hostPort: 80}]
                  env: [{name: X, valueFrom: {}}]
                  frobnicate: 1
        """),
    )
    at = {p.path for p in found}
    base = "/workloads/web/template/spec"
    assert {
        f"{base}/affinity",
        f"{base}/hostNetwork",
        f"{base}/volumes",
        f"{base}/containers/0/securityContext",
        f"{base}/containers/0/ports/0/hostPort",
        f"{base}/containers/0/env/0/valueFrom",
        f"{base}/containers/0/frobnicate",
    } <= at
    assert any("'affinity' is refused" in p.message for p in found)


def test_bounds_and_mistakes_come_all_at_once_with_pointers(inventory: Inventory) -> None:
    found = problems(
        inventory,
        doc("""
        api:
          replicas: 20000
          containers:
            - name: a
              image: img
              ports: [8080, 70000]
              liveness: {tcp: 8080, period_s: 99999}
              resources: {cpu: lots}
          rules: [{rule: spread, max_per_domain: 2}, {rule: anti-affinity, against: nope}]
          nodes: {groups: [nowhere]}
          depends_on: [ghost]
          colour: blue
        dup:
          replicas: 1
          containers: [{name: a, image: i, ports: [9000]}, {name: b, image: i, ports: [9000]}]
        loop1: {replicas: 1, depends_on: [loop2], containers: [{name: a, image: i}]}
        loop2: {replicas: 1, depends_on: [loop1], containers: [{name: a, image: i}]}
        """),
    )
    at = {p.path: p.message for p in found}
    w = "/workloads/api"
    for path in (
        f"{w}/replicas",
        f"{w}/containers/0/ports/1",
        f"{w}/containers/0/liveness/period_s",
        f"{w}/containers/0/resources/cpu",
        "/workloads/dup/containers/1/ports",
        f"{w}/rules/0/max_per_domain",
        f"{w}/rules/1/against",
        f"{w}/nodes/groups/0",
        f"{w}/depends_on/0",
        f"{w}/colour",
        "/workloads/loop1/depends_on",
    ):
        assert path in at, (path, at)
    assert "at most 10000" in at[f"{w}/replicas"]
    assert "unknown field 'colour'" in at[f"{w}/colour"]
    assert "loop" in at["/workloads/loop1/depends_on"]


def test_too_many_containers_is_refused_before_reading_them(inventory: Inventory) -> None:
    many = ", ".join(f"{{name: c{i}, image: i}}" for i in range(17))
    found = problems(inventory, doc(f"api: {{replicas: 1, containers: [{many}]}}\n"))
    assert [p.path for p in found] == ["/workloads/api/containers"]


HOT = """
heat_template_version: 2018-08-31
parameters:
  image: {type: string, default: localhost/busybox:shoal}
  pw: {type: string, hidden: true, default: x}
resources:
  ctl:
    type: OS::Heat::ResourceGroup
    properties:
      count: 3
      resource_def:
        type: OS::Nova::Server
        properties: {flavor: m1.small, image: cirros}
  api:
    type: Shoal::Workload
    properties:
      replicas: 3
      nodes: {groups: [ctl]}
      rules: [{rule: anti-affinity, scope: node}]
      template:
        apiVersion: v1
        kind: Pod
        metadata: {name: api}
        spec:
          containers:
            - name: api
              image: {get_param: image}
              ports: [{containerPort: 8080}]
"""


def test_a_heat_template_declares_a_workload(inventory: Inventory) -> None:
    spec = load_cluster(HOT, inventory)
    (api,) = spec.workloads
    assert api.kind is TemplateKind.POD and api.selector.groups == ("ctl",)
    assert api.containers[0].image == "localhost/busybox:shoal"


def test_a_heat_workloads_problems_point_into_the_template(inventory: Inventory) -> None:
    bad = HOT.replace("groups: [ctl]", "groups: [nope]").replace(
        "replicas: 3", "replicas: 3\n      colour: 1"
    )
    at = {p.path for p in problems(inventory, bad)}
    assert at == {"/resources/api/properties/colour", "/resources/api/properties/nodes/groups/0"}
    hidden = HOT.replace("{get_param: image}", "{get_param: pw}")
    assert [p.path for p in problems(inventory, hidden)] == ["/resources/api/properties"]
