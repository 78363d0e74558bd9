"""One module per ``railbird`` sub-command, each with ``configure(parser)`` and ``main(args) -> int``."""
