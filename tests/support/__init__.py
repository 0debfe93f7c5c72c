"""What the test folders share: one cursor marker (`cursor`), one edit-application oracle
(`edits`), one list of source fragments for property tests (`fragments`), typed reading of
a parsed program's nodes (`nodes`).

Imported as `tests.support.<module>`: the suite runs under `--import-mode=importlib`, where a
test folder is not put on `sys.path`, so helpers are reached from the repository root."""
