"""`shoal server` as a real process: webhook secrets never reach its access log, and it serves
HTTPS with a certificate made at test time (issue 9, point 7)."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.support.server import free_port, server_env, wait_ok

START_TIMEOUT_S = 180.0
CLUSTER = """
name: shop
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 1
    max: 3
"""


@contextmanager
def shoal_server(
    home: Path, *args: str, scheme: str = "http", verify: ssl.SSLContext | bool = True
) -> Iterator[tuple[str, Path]]:
    """`shoal server` on a free port (sim provider); its URL and its log file."""
    port = free_port()
    env = server_env(home, port=port, provider="sim", provider_options={"state_path": "sim.db"})
    log = home / "server.log"
    url = f"{scheme}://127.0.0.1:{port}"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "shoal", "server", "--port", str(port), *args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while True:
                assert proc.poll() is None, log.read_text()
                try:
                    r = httpx.get(f"{url}/healthz", timeout=1.0, verify=verify)
                    if r.status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
            yield url, log
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)


def test_webhook_secrets_never_reach_the_access_log(tmp_path: Path) -> None:
    with shoal_server(tmp_path, "--log-level", "info") as (url, log):
        token = (tmp_path / "admin-token").read_text().strip()
        with httpx.Client(base_url=url, headers={"X-Auth-Token": token}, timeout=30) as http:
            cluster = wait_ok(http, http.post("/v1/clusters", content=CLUSTER))["action"]
            native = http.post(
                "/v1/receivers", json={"name": "grow", "cluster": "shop", "action": "scale_out"}
            ).json()["receiver"]["webhook_url"]
            senlin = http.post(
                "/clustering/v1/receivers",
                json={
                    "receiver": {
                        "name": "grow2",
                        "type": "webhook",
                        "cluster_id": cluster["cluster_id"],
                        "action": "CLUSTER_SCALE_OUT",
                    }
                },
            ).json()["receiver"]["channel"]["alarm_url"]
            secrets = [native.split("token=")[1], senlin.split("token=")[1].split("&")[0]]
            with httpx.Client(timeout=30) as anonymous:  # the webhook's URL is the credential
                assert anonymous.post(f"{url}{native}").status_code == 202
                assert anonymous.post(senlin).status_code in (202, 409)  # 409: cooling down
        text = log.read_text()
    assert "/v1/webhooks/" in text and "/clustering/v1/webhooks/" in text, text
    assert text.count("token=***") >= 2, text
    for secret in secrets:
        assert secret not in text


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made now with `cryptography`."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def test_the_server_speaks_https_with_the_given_certificate(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    trust = ssl.create_default_context(cafile=str(cert))
    tls = ("--tls-certfile", str(cert), "--tls-keyfile", str(key))
    with shoal_server(tmp_path, *tls, scheme="https", verify=trust) as (url, log):
        token = (tmp_path / "admin-token").read_text().strip()
        r = httpx.get(f"{url}/v1/clusters", headers={"X-Auth-Token": token}, verify=trust)
        assert r.status_code == 200, r.text
        assert r.json() == {"clusters": []}
        plain = url.replace("https://", "http://")
        try:
            answered = httpx.get(f"{plain}/healthz", timeout=5).status_code
        except httpx.TransportError:
            answered = None
        assert answered != 200, "plain HTTP must not be served on the TLS port"
    assert f"serving {url}" in log.read_text()


def test_tls_needs_both_files_that_exist(tmp_path: Path) -> None:
    env = server_env(tmp_path, port=free_port(), provider="sim")
    for args in (["--tls-certfile", str(tmp_path / "none.pem")], ["--tls-keyfile", "k.pem"]):
        done = subprocess.run(
            [sys.executable, "-m", "shoal", "server", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        assert "--tls-" in done.stderr
