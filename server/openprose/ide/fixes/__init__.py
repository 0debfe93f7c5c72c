"""Quick fixes for diagnostics, and one "fix all" action for the safe ones.

Every fix is found from the tree, not from the diagnostic's message: the diagnostic only
says where to look (the client may send diagnostics of an older version of the text, so a
fix whose construct is no longer there is simply not offered).  Edits are minimal and use
0-based (line, character) positions counted in code points.

A fix is *safe* when applying it cannot be a wrong guess: making a reassigned ``const`` a
``let``, bounding a bare ``loop``, switching a ``session:`` to ``resume:`` on an agent whose
memory exists, removing a property that repeats the same value, adding the `:` a
``session`` with indented properties lacks, and a "did you mean" when exactly one name is
close.  ``fix_all`` applies only those, and checks the result.

Where things are: ``registry`` maps each code to its provider and answers the quick fixes
at a range; ``fix_all`` is the fix-all engine; each other module fixes one code or family
and is named after it (``undefined_agent``, ``missing_colon``, ``unknown_property``...),
built on ``fixer`` (what a provider works with), ``edits`` and ``did_you_mean`` (the "did you
mean" measure); ``variables`` finds the variables an undefined name may have meant, for
``undefined_variable`` and the command line's hints.
"""
