"""``python -m openprose`` runs the same command line as ``prose``."""

from openprose.cli import command

command()
