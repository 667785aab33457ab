"""Helpers shared by test packages: a server launcher, server processes, fresh databases."""
