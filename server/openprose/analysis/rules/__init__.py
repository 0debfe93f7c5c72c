"""Validation rules, one module per area of the language reference.

Every module here exposes ``check(ctx)``; ``all_rules()`` finds them, so adding a rule
module needs no registration here.  ``check`` is made of two parts an incremental analysis
runs apart: ``check_local(ctx)``, checks of the nodes the context's index holds, which
look at nothing else of the program than its model's agents, blocks, programs and defined
names (so each top-level item is checked on its own, and again only when it or one of
those names changed), and ``check_program(ctx)``, checks across the whole program's model,
run on every analysis.  ``openprose.codes`` names, for each code, the module that
reports it (``Code.checked_by``); tests/analysis/test_rule_registry.py checks every module
reports exactly the codes it is named for.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from functools import cache
from types import ModuleType

from openprose.analysis.context import Context

Rule = Callable[[Context], None]


@cache
def _modules() -> tuple[ModuleType, ...]:
    return tuple(
        importlib.import_module(f"{__name__}.{info.name}")
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name)
    )


@cache
def all_rules() -> tuple[Rule, ...]:
    return tuple(module.check for module in _modules())


@cache
def local_rules() -> tuple[Rule, ...]:
    return tuple(m.check_local for m in _modules() if hasattr(m, "check_local"))


@cache
def program_rules() -> tuple[Rule, ...]:
    return tuple(m.check_program for m in _modules() if hasattr(m, "check_program"))
