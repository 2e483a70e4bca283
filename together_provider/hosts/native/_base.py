"""The base of the native resources (generated into `hosts/native/resources.py`), with
the same arguments and outputs as the dynamic classes, so switching hosts is one import."""

from __future__ import annotations

from typing import Any, ClassVar

import pulumi

from together_provider.framework.kind import Kind
from together_provider.hosts.native._properties import PROPERTIES, camel, snake
from together_provider.hosts.native.package_schema import python_type
from together_provider.hosts.resource import input_props, set_program_attributes


class NativeResource(pulumi.CustomResource):
    """A resource of the native plugin; a subclass names its kind (`kind=`) and gets one Python
    property per field of the kind's table. Outputs declared `int` arrive as ints: the SDK casts
    the protocol's doubles through each output's declared type, set here from the field table."""

    kind: ClassVar[Kind]

    def __init_subclass__(cls, *, kind: Kind, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.kind = kind
        # Each output's type from the field table: that is how the SDK looks a type up to turn
        # the engine's 8.0 into 8.
        hints = [(f.name, f.annotation) for f in kind.schema.inputs]
        hints += [(f.name, f.annotation) for f in kind.schema.outputs]
        cls.__annotations__ = {name: pulumi.Output[python_type(hint)] for name, hint in hints}  # type: ignore[misc]
        for name, _ in hints:
            setattr(cls, name, pulumi.property(camel(name)))

    def __init__(
        self, resource_name: str, args: Any, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        # The name input defaults to the resource name in the plugin's check, not here.
        props = input_props(self.kind, args)
        super().__init__(self.kind.token, resource_name, props, opts)
        set_program_attributes(self.kind, self, args)

    def translate_output_property(self, prop: str) -> str:
        return snake(prop)

    def translate_input_property(self, prop: str) -> str:
        # The SDK calls this on the keys of nested dicts too: an API object's own keys
        # (`cluster_config`'s `load_balancer`) are not properties and keep their names.
        return camel(prop) if prop in PROPERTIES else prop
