import gc

# Start-up: the ~600 classes lsprotocol, attrs and cattrs make while the server is imported
# set off full collections that free nothing (~60 ms of a ~0.45 s start). Collect nothing
# until the server exists, then freeze what the imports made: it lives as long as the
# process, and later full collections (while the user types) need not walk it again.
gc.disable()
from openprose.lsp.server import main  # noqa: E402

gc.freeze()
gc.enable()

raise SystemExit(main())
