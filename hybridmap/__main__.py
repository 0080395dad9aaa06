from .frontends.cli.main import main

main()
