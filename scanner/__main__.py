from scanner.cli.app import main

main()
