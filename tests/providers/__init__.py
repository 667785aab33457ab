"""Tests of the local and sim providers: real processes, real HTTP, a real simulated cloud."""
