"""One module per `memscope` sub-command. Each defines `register(subparsers)`; the parser it adds
sets `func` to a callable taking the parsed args and returning an exit code."""
