import sys

try:
    from .cli import main
except KeyboardInterrupt:  # Ctrl-C while the interpreter is still importing
    print("tcadvisor: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
