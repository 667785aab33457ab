"""`python -m shoal` runs the `shoal` command."""

from shoal.cli.main import run

if __name__ == "__main__":  # not again in a spawned child (the notifications' publisher)
    run()
