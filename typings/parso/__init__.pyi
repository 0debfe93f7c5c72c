# Type stubs for the parts of parso that OpenProse uses (parso ships no type information):
# the tree base classes our syntax tree specialises, and split_lines.
