from .frontends.cli.entry import run

run()
