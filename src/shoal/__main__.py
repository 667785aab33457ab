"""`python -m shoal` runs the `shoal` command."""

from shoal.cli.main import run

run()
