"""Shoal: declare a virtual cluster once; Shoal places it whole, creates it and keeps it healthy."""

__version__ = "0.1.0"
