"""`shoal keystone register`: put Shoal into a Keystone catalog as the `clustering` service
(the Senlin façade) and, with `--orchestration`, as the `orchestration` service (the Heat façade,
issue 38).

keystoneauth1 is imported only when `register` runs: it alone costs a third of a second.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from shoal.cli import screen
from shoal.cli.errors import EXIT_FAILED

if TYPE_CHECKING:
    from keystoneauth1 import session as ks_session

app = typer.Typer(help="Keystone integration.", no_args_is_help=True)

SERVICE_TYPE = "clustering"
INTERFACES = ("public", "internal", "admin")


def _v3(url: str) -> str:
    url = url.rstrip("/")
    return url if url.endswith("/v3") else f"{url}/v3"


def register_service(
    sess: ks_session.Session,
    keystone: str,
    endpoint: str,
    *,
    name: str = "shoal",
    region: str = "RegionOne",
    service_type: str = SERVICE_TYPE,
) -> dict[str, Any]:
    """Create (or update) the service of `service_type` and its three endpoints; what was
    done."""
    base = _v3(keystone)

    def call(method: str, path: str, **kw: Any) -> dict[str, Any]:
        resp = sess.request(f"{base}{path}", method, **kw)
        out: dict[str, Any] = resp.json() if resp.content else {}
        return out

    services = call("GET", f"/services?type={service_type}").get("services", [])
    if services:
        service = services[0]
    else:
        service = call(
            "POST",
            "/services",
            json={"service": {"type": service_type, "name": name, "enabled": True}},
        )["service"]
    done: dict[str, Any] = {"service_id": service["id"], "endpoints": {}}
    found = call("GET", f"/endpoints?service_id={service['id']}").get("endpoints", [])
    for interface in INTERFACES:
        mine = [e for e in found if e.get("interface") == interface]
        body = {"interface": interface, "url": endpoint, "region_id": region}
        if mine:
            ep = call("PATCH", f"/endpoints/{mine[0]['id']}", json={"endpoint": body})
        else:
            body["service_id"] = service["id"]
            ep = call("POST", "/endpoints", json={"endpoint": body})
        done["endpoints"][interface] = ep["endpoint"]["id"]
    return done


@app.command("register")
def register(
    endpoint: Annotated[
        str, typer.Option(help="Shoal's clustering URL, e.g. http://host:8470/clustering.")
    ],
    admin_password: Annotated[
        str, typer.Option(envvar="OS_PASSWORD", help="The Keystone admin's password.")
    ],
    url: Annotated[
        str, typer.Option(envvar="OS_AUTH_URL", help="Keystone's URL.")
    ] = "http://127.0.0.1:5000/v3",
    admin_user: Annotated[str, typer.Option(help="Keystone admin user.")] = "admin",
    admin_project: Annotated[str, typer.Option(help="The admin's project.")] = "admin",
    domain: Annotated[str, typer.Option(help="Domain of user and project.")] = "Default",
    region: Annotated[str, typer.Option(help="Region of the endpoints.")] = "RegionOne",
    name: Annotated[str, typer.Option(help="Service name.")] = "shoal",
    orchestration: Annotated[
        str | None,
        typer.Option(
            help="Also register `orchestration` (Heat's API) at this URL, e.g. "
            "'http://host:8470/orchestration/v1/%(project_id)s'."
        ),
    ] = None,
) -> None:
    """Create the `clustering` service (and `orchestration`) with public/internal/admin
    endpoints in Keystone."""
    from keystoneauth1 import session as ks_session
    from keystoneauth1.exceptions import ClientException
    from keystoneauth1.identity import v3

    plugin = v3.Password(
        auth_url=_v3(url),
        username=admin_user,
        password=admin_password,
        project_name=admin_project,
        user_domain_name=domain,
        project_domain_name=domain,
    )
    sess = ks_session.Session(auth=plugin, timeout=30)
    try:
        done = register_service(sess, url, endpoint, name=name, region=region)
        heat = (
            None
            if orchestration is None
            else register_service(
                sess,
                url,
                orchestration,
                name=f"{name}-orchestration",
                region=region,
                service_type="orchestration",
            )
        )
    except ClientException as e:
        screen.err().print(f"error: Keystone refused: {e}")
        raise typer.Exit(EXIT_FAILED) from e
    out = screen.out()
    out.print(f"service {SERVICE_TYPE} ({done['service_id']}) registered at {endpoint}")
    for interface, ep_id in done["endpoints"].items():
        out.print(f"  {interface}: {ep_id}")
    if heat is not None:
        out.print(f"service orchestration ({heat['service_id']}) registered at {orchestration}")
        for interface, ep_id in heat["endpoints"].items():
            out.print(f"  {interface}: {ep_id}")
