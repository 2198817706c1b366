"""_version.py - the package's version, the project's one version (the file
VERSION at the top of the sources; tests/package/versions.sh checks that they
agree), and the major number the C libraries' sonames carry."""
__version__ = "0.4.0"
SOVERSION = __version__.split(".")[0]
