"""The native resources for Python programs, served by the `pulumi-resource-together` plugin
instead of the dynamic-provider host: `Cluster` (`together:index:Cluster`) and `SharedVolume`
(`together:index:SharedVolume`).

Same arguments (`ClusterArgs`, `SharedVolumeArgs`) and the same outputs as the dynamic
`together_provider.Cluster` and `SharedVolume`, so switching is one import. Outputs declared
`int` arrive as ints: the SDK casts the protocol's doubles through each output's declared type,
found here under its schema (camelCase) name. Both classes are one `NativeResource` over their
`Kind`; the properties come from the kind's field table.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, ClassVar

import pulumi

from together_provider import registry
from together_provider.cluster.resource import ClusterArgs
from together_provider.framework.kind import Kind
from together_provider.native._properties import camel, snake
from together_provider.native.package_schema import python_type
from together_provider.volume.resource import SharedVolumeArgs


class NativeResource(pulumi.CustomResource):
    """A resource of the native plugin; a subclass names its kind (`kind=`) and gets one Python
    property per field of the kind's table."""

    kind: ClassVar[Kind]

    if TYPE_CHECKING:
        # The outputs (cluster_id, status, ...), attached by __init_subclass__.
        def __getattr__(self, name: str) -> pulumi.Output[Any]: ...

    def __init_subclass__(cls, *, kind: Kind, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.kind = kind
        # Each output's type from the field table, under its schema name: that is how the SDK
        # looks a type up to turn the engine's 8.0 into 8.
        hints = [(f.name, f.annotation) for f in kind.schema.inputs]
        hints += [(f.name, f.annotation) for f in kind.schema.outputs]
        cls.__annotations__ = {name: pulumi.Output[python_type(hint)] for name, hint in hints}  # type: ignore[misc]
        for name, _ in hints:
            setattr(cls, name, pulumi.property(camel(name)))

    def __init__(
        self, resource_name: str, args: Any, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        # Not dataclasses.asdict: it deep-copies, and Outputs must be passed through untouched.
        # Unset inputs stay (the SDK sends no None), so each is an output resolving to None
        # rather than the class's bare property.
        props: dict[str, Any] = {f.name: getattr(args, f.name) for f in dataclasses.fields(args)}
        props.update(dict.fromkeys(self.kind.schema.output_names))
        super().__init__(self.kind.token, resource_name, props, opts)

    def translate_output_property(self, prop: str) -> str:
        return snake(prop)

    def translate_input_property(self, prop: str) -> str:
        return camel(prop)


class Cluster(NativeResource, kind=registry.CLUSTER):
    """A Together GPU cluster through the native plugin (`together:index:Cluster`).

    Changing `num_gpus` or `num_preemptible_gpus` updates it in place; changing what the cluster
    *is* replaces it (docs/reference.md). Unlike the dynamic `Cluster`, this one honours
    `pulumi.ResourceOptions(custom_timeouts=...)`, can be imported with `pulumi import`, and lets
    one `pulumi up` wait on any number of clusters at once.
    """

    has_volume: bool

    def __init__(
        self, resource_name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(resource_name, args, opts)
        # As on the dynamic host: workloads mount the volume's PersistentVolume only on a
        # cluster declared with one (`kubernetes.WorkloadCluster`).
        self.has_volume = args.has_volume


class SharedVolume(NativeResource, kind=registry.VOLUME):
    """A Together shared volume through the native plugin (`together:index:SharedVolume`).

    Growing `size_tib` is one in-place PUT; a shrink is rejected at preview; changing the name,
    region, project or lifecycle independence replaces it; `pulumi import` takes a volume id.
    """

    def __init__(
        self, resource_name: str, args: SharedVolumeArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(resource_name, args, opts)
        # Known at preview, unlike outputs the plugin does not preview: the id is Together's
        # volume id (so an attached cluster does not preview as replaced when the volume grows),
        # and the region is the input (Together reports none; a new region is a new volume).
        self.volume_id = self.id
        self.region = pulumi.Output.from_input(args.region)
