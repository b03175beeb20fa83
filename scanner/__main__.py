from scanner.cli.entry import main

main()
