from cafleet.entrypoints.cli.main import main

main()
