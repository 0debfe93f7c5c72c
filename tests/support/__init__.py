"""What the test folders share: one cursor marker (`cursor`), one edit-application oracle
(`edits`), one list of source fragments for property tests (`fragments`), the hypothesis
strategies built on them (`strategies`), typed reading of a parsed program's nodes
(`nodes`), characters whose size differs by encoding (`characters`).

Imported as `tests.support.<module>`: the suite runs under `--import-mode=importlib`, where a
test folder is not put on `sys.path`, so helpers are reached from the repository root."""
