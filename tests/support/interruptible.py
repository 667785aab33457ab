"""Python commands that a test interrupts with SIGINT (Ctrl-C), started so the signal works.

A shell that starts a job in the background without job control (`make check &`, CI's runner)
sets SIGINT to ignored in it, and an ignored signal stays ignored across fork and exec: a
`shoal` started under it never sees the test's Ctrl-C (Python installs its KeyboardInterrupt
handler only where SIGINT is at its default). `interruptible(argv)` runs `python -m MODULE
ARGS` through a one-line start that puts Python's own SIGINT handler back first, whatever the
test process inherited, instead of relying on how the suite was started.
"""

from __future__ import annotations

_START = (
    "import runpy, signal, sys; "
    "signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv = sys.argv[1:]; "
    "runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)"
)


def interruptible(argv: list[str]) -> list[str]:
    """`[python, "-m", module, *args]` as a command whose SIGINT raises KeyboardInterrupt."""
    python, flag, module, *args = argv
    assert flag == "-m", argv
    return [python, "-c", _START, module, *args]
