from openprose.lsp.server import main

main()
