"""Validation rules, one module per area of the language reference.

Every module here exposes ``check(ctx)``; ``all_rules()`` finds them, so adding a rule
module needs no registration here.  ``openprose.codes`` names, for each code, the module that
reports it (``Code.checked_by``); tests/analysis/test_rule_registry.py checks every module
reports exactly the codes it is named for.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from functools import cache

from openprose.analysis.context import Context

Rule = Callable[[Context], None]


@cache
def all_rules() -> tuple[Rule, ...]:
    rules = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        rules.append(module.check)
    return tuple(rules)
