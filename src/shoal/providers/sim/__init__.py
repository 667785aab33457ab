"""The `sim` provider: a simulated cloud for scale and what-if runs (see `provider.py`)."""

from shoal.providers.sim.provider import SimProvider

__all__ = ["SimProvider"]
