"""The native `Cluster` resource for Python programs: `together:index:Cluster`, served by the
`pulumi-resource-together` plugin instead of the dynamic-provider host.

Same arguments (`ClusterArgs`) and the same outputs as the dynamic `together_provider.Cluster`,
so switching is one import. Outputs declared `int` arrive as ints: the SDK casts the protocol's
doubles through each output's declared type, found here under its schema (camelCase) name.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import pulumi

from together_provider.cluster_schema import CLUSTER
from together_provider.native._wire import camel, snake
from together_provider.native.package_schema import CLUSTER_TOKEN, python_type
from together_provider.resource import ClusterArgs


class Cluster(pulumi.CustomResource):
    """A Together GPU cluster through the native plugin (`together:index:Cluster`).

    Changing `num_gpus` or `num_preemptible_gpus` updates it in place; changing what the cluster
    *is* replaces it (the README's table). Unlike the dynamic `Cluster`, this one honours
    `pulumi.ResourceOptions(custom_timeouts=...)`, can be imported with `pulumi import`, and lets
    one `pulumi up` wait on any number of clusters at once.
    """

    if TYPE_CHECKING:
        # The outputs are the dynamic Cluster's (cluster_id, status, ...), attached below.
        def __getattr__(self, name: str) -> pulumi.Output[Any]: ...

    def __init__(
        self,
        resource_name: str,
        args: ClusterArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        # Not dataclasses.asdict: it deep-copies, and Outputs must be passed through untouched.
        props: dict[str, Any] = {
            f.name: getattr(args, f.name)
            for f in dataclasses.fields(args)
            if getattr(args, f.name) is not None
        }
        props.update(dict.fromkeys(CLUSTER.output_names))
        super().__init__(CLUSTER_TOKEN, resource_name, props, opts)

    def translate_output_property(self, prop: str) -> str:
        return snake(prop)

    def translate_input_property(self, prop: str) -> str:
        return camel(prop)


# Each output's type from the field table, under its schema name: that is how the SDK looks a
# type up to turn the engine's 8.0 into 8.
_FIELDS: list[tuple[str, Any]] = [(f.name, f.annotation) for f in CLUSTER.inputs]
_FIELDS += [(f.name, f.annotation) for f in CLUSTER.outputs]
Cluster.__annotations__ = {name: pulumi.Output[python_type(hint)] for name, hint in _FIELDS}  # type: ignore[misc]
for _name in Cluster.__annotations__:
    setattr(Cluster, _name, pulumi.property(camel(_name)))
