"""Container configs are checked before anything runs: every problem at once, with pointers
into the compose file or Pod manifest; and on `local` only admins (or every project, when the
operator says so) may run containers, on a machine that has podman."""

from __future__ import annotations

import pytest

from shoal.documents.collect import InvalidDocument
from shoal.documents.loader import cluster_from_tree
from shoal.documents.syntax import parse
from shoal.model.catalogs import default_inventory
from shoal.model.cluster import ClusterSpec
from shoal.service.containers import SETTING, ContainerGate
from shoal.service.errors import Conflict, Forbidden
from shoal.store.records import Principal

HEAD = """
name: box
instances:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
software:
  configs:
"""
GOOD = (
    HEAD
    + """
    web:
      group: docker-compose
      config: |
        web:
          image: localhost/busybox:shoal
          command: /bin/httpd -f -p ${SHOAL_NODE_ADDRESS}:8081 -h /www
          net: host
          restart: always
          volumes: ["./data:/data", "${SHOAL_NODE_WORKDIR}/www:/www:ro"]
    pod:
      group: kubelet
      options: {containers_timeout: 30}
      config: |
        apiVersion: v1
        kind: Pod
        metadata: {name: web}
        spec:
          hostNetwork: true
          containers:
          - {name: httpd, image: localhost/busybox:shoal, command: [/bin/httpd, -f]}
  deployments:
    web: {config: web, target: web}
    pod: {config: pod, target: web}
"""
)
BAD = (
    HEAD
    + """
    web:
      group: docker-compose
      options: {pull: always}
      config: |
        web:
          image: localhost/busybox:shoal
          privileged: true
          ports: ["8080:80"]
          volumes: ["/etc:/host-etc", "./../up:/x"]
          net: bridge
          mystery: 1
    pod:
      group: kubelet
      config: |
        apiVersion: v1
        kind: Deployment
        metadata: {name: x}
        spec:
          hostPID: true
          volumes: [{name: r, hostPath: {path: /}}]
          containers:
          - name: c
            image: localhost/busybox:shoal
            ports: [{containerPort: 80, hostPort: 80}]
            securityContext: {privileged: true}
    broken:
      group: kubelet
      config: "a: [b"
  deployments:
    web: {config: web, target: web}
"""
)


def _read(text: str) -> ClusterSpec:
    return cluster_from_tree(parse(text), default_inventory())


def test_a_good_compose_file_and_pod_pass() -> None:
    spec = _read(GOOD)
    assert {c.name for c in spec.software.configs} == {"web", "pod"}


def test_every_problem_is_named_with_its_pointer() -> None:
    with pytest.raises(InvalidDocument) as bad:
        _read(BAD)
    found = {p.path: p.message for p in bad.value.problems}
    web, pod = "/software/configs/web", "/software/configs/pod"
    for path in (
        f"{web}/options/pull",
        f"{web}/config/web/privileged",
        f"{web}/config/web/ports",
        f"{web}/config/web/volumes/0",
        f"{web}/config/web/volumes/1",
        f"{web}/config/web/net",
        f"{web}/config/web/mystery",
        f"{pod}/config/kind",
        f"{pod}/config/spec/hostPID",
        f"{pod}/config/spec/hostNetwork",
        f"{pod}/config/spec/volumes/0/hostPath",
        f"{pod}/config/spec/containers/0/ports/0/hostPort",
        f"{pod}/config/spec/containers/0/securityContext/privileged",
        "/software/configs/broken/config",
    ):
        assert path in found, (path, found)
    assert "not valid YAML" in found["/software/configs/broken/config"]
    assert "outside the node's working directory" in found[f"{web}/config/web/volumes/0"]


def test_only_admins_run_containers_on_local_unless_the_operator_says_so() -> None:
    software = _read(GOOD).software
    tenant, admin = Principal("p1", False), Principal("admin", True)
    with pytest.raises(Forbidden) as refused:
        ContainerGate("local", missing=lambda: None).check(tenant, software)
    assert SETTING in refused.value.message
    assert refused.value.details[0]["path"].startswith("/software/configs/")
    ContainerGate("local", missing=lambda: None).check(admin, software)
    ContainerGate("local", all_projects=True, missing=lambda: None).check(tenant, software)
    ContainerGate("sim").check(tenant, software)  # simulated: nothing runs on this host


def test_a_machine_without_podman_says_which_packages() -> None:
    software = _read(GOOD).software
    gate = ContainerGate("local", missing=lambda: "install `apt-get install -y podman runc`")
    with pytest.raises(Conflict) as refused:
        gate.check(Principal("admin", True), software)
    assert "podman runc" in refused.value.message


def test_podman_not_found_names_the_packages() -> None:
    from shoal.providers.local.podman import Podman, PodmanMissingError

    with pytest.raises(PodmanMissingError) as missing:
        Podman.find({"PATH": "/nonexistent"})
    assert "apt-get install -y podman runc" in str(missing.value)


HOT = """
heat_template_version: wallaby
resources:
  server:
    type: OS::Nova::Server
    properties: {flavor: m1.tiny, image: cirros, user_data_format: SOFTWARE_CONFIG}
  compose:
    type: OS::Heat::SoftwareConfig
    properties:
      group: docker-compose
      config: |
        web:
          image: localhost/busybox:shoal
          net: host
          privileged: true
  deploy:
    type: OS::Heat::SoftwareDeployment
    properties: {config: {get_resource: compose}, server: {get_resource: server}}
"""


def test_a_heat_template_gets_the_same_checks() -> None:
    with pytest.raises(InvalidDocument) as bad:
        cluster_from_tree(parse(HOT), default_inventory())
    paths = [p.path for p in bad.value.problems]
    assert "/resources/compose/properties/config/web/privileged" in paths, paths
