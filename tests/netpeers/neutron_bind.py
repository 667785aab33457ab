"""An ML2 mechanism driver that binds every port to whatever host asks, for the test Neutron
(neutron_serve.py). Runs inside Neutron's venv.

Without agents, ML2's real drivers (openvswitch, linuxbridge, ovn) have nobody to bind a port
for, so a port Nova asks to bind (`binding:host_id` = its compute host) ends
`binding_failed` and Nova puts the server in ERROR. This driver answers the binding as an Open
vSwitch agent's driver would (`vif_type` ovs, the first segment) and marks the port `ACTIVE`,
which is what the agent would report once it wired the port; nothing is wired (Nova's fake
virt driver plugs nothing either). Ports nobody binds (no host) stay `DOWN`, as before.
Registered as the ML2 mechanism driver `shoal_bind_any` by neutron_serve.py.
"""

from __future__ import annotations

from typing import Any

from neutron_lib import constants
from neutron_lib.api.definitions import portbindings
from neutron_lib.plugins.ml2 import api


class BindAnyHost(api.MechanismDriver):
    def initialize(self) -> None:
        pass

    def bind_port(self, context: Any) -> None:
        if context.current.get(portbindings.VNIC_TYPE, portbindings.VNIC_NORMAL) != (
            portbindings.VNIC_NORMAL
        ):
            return
        for segment in context.segments_to_bind:
            context.set_binding(
                segment[api.ID],
                portbindings.VIF_TYPE_OVS,
                {portbindings.CAP_PORT_FILTER: True, portbindings.OVS_HYBRID_PLUG: False},
                status=constants.PORT_STATUS_ACTIVE,
            )
            return
