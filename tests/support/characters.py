"""Characters whose size differs by position encoding, for tests that convert positions."""

ASTRAL = "\U0001d11e"  # one code point, two UTF-16 code units, four UTF-8 bytes
