"""`shoal login`: a Keystone token and Shoal's URL for a Keystone-mode server, from clouds.yaml
or `OS_*` variables, printed as `SHOAL_URL` / `SHOAL_TOKEN` for the other commands.

A Keystone-mode server takes Keystone tokens on the native API as well as at `/clustering`; its
catalog entry is the façade's URL (`.../clustering`), so the native API is that URL's parent.
The token is printed for `eval "$(shoal login)"`, never logged.
"""

from __future__ import annotations

import json
import shlex
from typing import Annotated

import typer

from shoal.cli import screen
from shoal.cli.errors import EXIT_FAILED, EXIT_INVALID, CliError

SERVICE_TYPE = "clustering"
FACADE_SUFFIX = "/clustering"


def shoal_url(endpoint: str) -> str:
    """The native API's URL for a catalog endpoint of the façade."""
    base = endpoint.rstrip("/")
    return base[: -len(FACADE_SUFFIX)] if base.endswith(FACADE_SUFFIX) else base


def login(
    cloud: Annotated[
        str | None,
        typer.Option("--os-cloud", help="A cloud of clouds.yaml; default: $OS_CLOUD or OS_*."),
    ] = None,
    interface: Annotated[str, typer.Option("--interface", help="Catalog interface.")] = "public",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of exports.")] = False,
) -> None:
    """Authenticate with Keystone and print SHOAL_URL and SHOAL_TOKEN (eval "$(shoal login)")."""
    # Imported here, not at the top: every other command must start without openstacksdk.
    from keystoneauth1.exceptions import ClientException
    from openstack import config as os_config
    from openstack.exceptions import OpenStackCloudException

    try:
        region = os_config.OpenStackConfig().get_one(cloud=cloud)
    except OpenStackCloudException as e:
        raise CliError(f"no usable cloud configuration: {e}", EXIT_INVALID) from None
    try:
        sess = region.get_session()
        token = sess.get_token()
        endpoint = sess.get_endpoint(service_type=SERVICE_TYPE, interface=interface)
    except ClientException as e:
        raise CliError(f"Keystone refused the login: {e}", EXIT_FAILED) from None
    if not endpoint:
        raise CliError(f"the catalog has no '{SERVICE_TYPE}' endpoint", EXIT_FAILED)
    url = shoal_url(str(endpoint))
    if as_json:
        screen.out().print_json(json.dumps({"url": url, "token": token}))
        return
    typer.echo(f"export SHOAL_URL={shlex.quote(url)}")
    typer.echo(f"export SHOAL_TOKEN={shlex.quote(str(token))}")
