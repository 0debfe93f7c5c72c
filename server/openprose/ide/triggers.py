"""Characters after which editors ask for completion or signature help.

Kept apart from the feature modules so the language server can advertise them without
importing those modules at start-up."""

COMPLETION_TRIGGERS = (":", " ", "{", "(", "|", ",", "[", ".", "/", '"')
SIGNATURE_TRIGGERS = ("(", ",")
