"""The user data that points an image's Heat agents at Shoal: nothing else is needed on the image.

An image built for Heat's software deployments runs os-collect-config at boot with its default
collectors, one of which (`heat_local`) reads `/var/lib/heat-cfntools/cfn-init-data`. Heat puts
the server's metadata there through cloud-init at boot; so does Shoal, with cloud-init's own
`write_files` module rather than Heat's part handler. The metadata carries the
`os-collect-config` key (request collector, metadata URL, polling interval); the image's
os-apply-config template for heat-config renders it into /etc/os-collect-config.conf, and
os-collect-config re-executes itself polling Shoal's metadata URL from then on, exactly as for
Heat's POLL_TEMP_URL transport.

The cloud-config is written as JSON (YAML's subset), so no YAML library is needed here.
"""

from __future__ import annotations

import base64
import json

from shoal.model.heat_agent import COLLECTOR_KEY, DEPLOYMENTS_KEY, CollectorSettings

CFN_INIT_DATA = "/var/lib/heat-cfntools/cfn-init-data"
"""Where os-collect-config's `heat_local` collector reads boot-time metadata."""

MAX_USER_DATA_BYTES = 65535
"""Nova's limit on user data (after base64)."""


def agent_cloud_config(collector: CollectorSettings) -> str:
    """A `#cloud-config` document writing the boot-time metadata for the agents."""
    boot_metadata = {DEPLOYMENTS_KEY: [], COLLECTOR_KEY: collector.as_json()}
    document = {
        "write_files": [
            {
                "path": CFN_INIT_DATA,
                "permissions": "0600",
                "content": json.dumps(boot_metadata, sort_keys=True),
            }
        ]
    }
    return "#cloud-config\n" + json.dumps(document, indent=1, sort_keys=True) + "\n"


def agent_user_data(collector: CollectorSettings) -> str:
    """The base64 text Nova takes as a server's `user_data`. ValueError when it is too long
    (only a metadata URL of tens of kilobytes could make it so)."""
    encoded = base64.b64encode(agent_cloud_config(collector).encode()).decode()
    if len(encoded) > MAX_USER_DATA_BYTES:
        raise ValueError(
            f"user data for the agents is {len(encoded)} bytes, Nova takes at most "
            f"{MAX_USER_DATA_BYTES}"
        )
    return encoded
