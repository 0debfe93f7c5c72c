"""The language server: a thin pygls adapter over the syntax, analysis and ide layers."""
