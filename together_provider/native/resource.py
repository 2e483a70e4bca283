"""The native `Cluster` resource for Python programs: `together:index:Cluster`, served by the
`pulumi-resource-together` plugin instead of the dynamic-provider host.

Same arguments (`ClusterArgs`) and the same outputs as the dynamic `together_provider.Cluster`,
so switching is one import. Outputs declared `int` arrive as ints: the SDK casts the protocol's
doubles through each output's declared type, found here under its schema (camelCase) name.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import TYPE_CHECKING, Any

import pulumi

from together_provider import resource as dynamic
from together_provider.native._wire import camel, snake
from together_provider.native.package_schema import CLUSTER_TOKEN
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
        props.update({name: None for name in _OUTPUTS if name not in props})
        super().__init__(CLUSTER_TOKEN, resource_name, props, opts)

    def translate_output_property(self, prop: str) -> str:
        return snake(prop)

    def translate_input_property(self, prop: str) -> str:
        return camel(prop)


_OUTPUTS: dict[str, Any] = inspect.get_annotations(dynamic.Cluster)

# Each output's type under its schema name, which is how the SDK looks types up to turn the
# engine's 8.0 into 8 (the dynamic resource declares the same names with the same types).
Cluster.__annotations__ = dict(_OUTPUTS)
for _name in _OUTPUTS:
    setattr(Cluster, _name, pulumi.property(camel(_name)))
