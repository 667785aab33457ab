"""The `openstack` provider: real Nova servers and Cinder volumes, through openstacksdk."""
