"""The one exception tree: API errors under ApiError, the user's input errors under InputError,
everything under TogetherError (so `except TogetherError` is always enough)."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator

import pytest

from together_facts import errors
from together_facts.errors import ApiError, InputError, SpecError, TogetherError
from together_provider.kubernetes import WorkloadSpecError
from together_provider.preview import PreviewInputError
from together_provider.stack_config import ConfigError

API = [
    errors.AuthenticationError,
    errors.NotFoundError,
    errors.OutOfCapacityError,
    errors.InvalidRequestError,
    errors.RateLimitedError,
    errors.ServerError,
    errors.ApiConnectionError,
    errors.UnexpectedResponseError,
]


@pytest.mark.parametrize("kind", API)
def test_api_errors_carry_a_status_and_hang_off_api_error(kind: type[ApiError]) -> None:
    assert issubclass(kind, ApiError) and not issubclass(kind, InputError)
    assert kind("boom", status=503).status == 503


@pytest.mark.parametrize("kind", [SpecError, ConfigError, WorkloadSpecError, PreviewInputError])
def test_input_errors_are_not_http_flavoured(kind: type[TogetherError]) -> None:
    assert issubclass(kind, InputError) and not issubclass(kind, ApiError)


def test_the_drawn_tree_names_every_error_of_the_module() -> None:
    drawn = errors.TogetherError.__doc__ or ""
    names = [n for n in errors.__all__ if n.endswith("Error")]
    assert all(name in drawn for name in names)
    assert all(issubclass(getattr(errors, n), TogetherError) for n in names)


PACKAGES = ("together_api", "together_provider", "together_policy", "together_autoscaler")


def _subclasses(root: type[TogetherError]) -> Iterator[type[TogetherError]]:
    for kind in root.__subclasses__():
        yield kind
        yield from _subclasses(kind)


def test_the_drawn_tree_names_every_error_of_the_project() -> None:
    """Those defined beside the code that raises them too (the tree is where a reader looks)."""
    for package in PACKAGES:
        for module in pkgutil.walk_packages(
            importlib.import_module(package).__path__, f"{package}."
        ):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)
    drawn = errors.TogetherError.__doc__ or ""
    kinds = {kind.__name__: kind.__module__ for kind in _subclasses(TogetherError)}
    assert {"PriceInputError", "KubeconfigError", "ConfigError"} <= set(kinds)
    missing = {name: module for name, module in kinds.items() if f"── {name} " not in drawn}
    assert missing == {}


def test_every_error_of_the_api_is_exported_and_re_exported_by_the_provider() -> None:
    """`errors.__all__` lists every exception class of the module, and `together_provider`
    re-exports each one itself (the same class, so `except together_provider.X` catches it)."""
    import together_provider

    defined = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, TogetherError)
    }
    assert set(errors.__all__) == defined
    for name in defined:
        assert name in together_provider.__all__, name
        assert getattr(together_provider, name) is getattr(errors, name)
