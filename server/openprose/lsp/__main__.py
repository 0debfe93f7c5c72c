from openprose.lsp.server import main

raise SystemExit(main())
