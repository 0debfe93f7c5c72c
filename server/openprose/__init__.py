"""OpenProse toolchain: parser, analyzer, language server and VM for the OpenProse language."""

__version__ = "0.1.0"
