"""`make mutate`: mutation testing of the pure cores with mutmut, one module at a time against the
unit tests that cover it (the table in `mutate/modules.py`); not part of `make test`."""
