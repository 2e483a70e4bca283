"""The sweep's trial code (python -m sweep.trial): one hyperparameter trial per Job index."""
