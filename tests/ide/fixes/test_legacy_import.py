"""The quick fix for a legacy `import` (W027)."""

from __future__ import annotations

from tests.ide.fixes.fixes_support import fixed


def test_rewrite_a_legacy_import() -> None:
    text = 'import "web-search" from "github:acme/skills"\n\nagent r:\n  skills: ["web-search"]\n'
    result = fixed(text, "W027", 'Rewrite as `use "@acme/web-search"`')
    assert result.startswith('use "@acme/web-search"\n')
