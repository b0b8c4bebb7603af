"""The front end: the library entry points (``verify``, ``compare``, ``build``), the command
line and its commands, reports, traces for people, and loading user files by name.

It may import everything; the core, the models, the apps and the properties never import
it (``tests/core/test_core_boundaries.py``). See ``docs/architecture.md``."""
