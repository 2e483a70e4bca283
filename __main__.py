"""The GPU clusters of one environment, declared from its config (stacks/Pulumi.<stack>.yaml). A
bad config fails here, before any resource is registered, with every problem listed; each kind's
map, what it attaches and what it exports come from `registry.KINDS`."""

import os
from typing import Any

import pulumi

import together_provider
from together_provider import native
from together_provider.extensions import ExportsExtension, StackConfigExtension, config_key
from together_provider.stack_config import ConfigError, load, project_values

try:
    stack_config = load(project_values(pulumi.get_project(), pulumi.runtime.get_config_env()))
except ConfigError as error:
    # A RunError is reported as a plain message: the config problems, not a Python traceback.
    raise pulumi.RunError(str(error)) from None

# `host: native` manages the resources through the native plugin (docs/hosts.md).
host = native if stack_config.host == "native" else together_provider

declared: dict[str, dict[str, Any]] = {}
for kind in stack_config.in_declaration_order():  # an attached kind first: its outputs are inputs
    resource_type = getattr(host, kind.type_name)
    args_type = getattr(together_provider, kind.exports[1])
    declared[config_key(kind)] = {}
    exports = kind.get(ExportsExtension) or ExportsExtension(())
    for name, props in stack_config.props(kind).items():
        for attach in kind[StackConfigExtension].attaches:
            key = stack_config.attachments(kind, attach).get(name)
            if key is not None:
                attached = declared[attach.target][key]
                props |= {prop: getattr(attached, source) for prop, source in attach.props.items()}
        resource = declared[config_key(kind)][name] = resource_type(name, args_type(**props))
        for export in exports.exports:
            value = export.value(resource)
            pulumi.export(
                export.key.format(name=name),
                pulumi.Output.secret(value) if export.secret else value,
            )

# `make demo` with real nodes (docs/burst.md): the preemptible autoscaler runs as a pod, deployed
# by PreemptibleAutoscaler onto the first resource (by name) that declares a preemptible ceiling,
# from the image .demo/env names in TOGETHER_DEMO_AUTOSCALER_IMAGE, so a `pulumi up` that moves
# the range rolls its Deployment. Without it (KWOK nodes run no container) scripts/demo.sh runs
# the controller as a local process instead.
demo_image = os.environ.get("TOGETHER_DEMO_AUTOSCALER_IMAGE")
if demo_image:
    from together_provider.kubernetes import (
        PreemptibleAutoscaler,
        PreemptibleAutoscalerArgs,
        cluster_provider,
    )

    def demo_setting(variable: str, default: str | None = None) -> str:
        value = os.environ.get(variable, default)
        if not value:
            raise pulumi.RunError(
                f"{variable} is not set, and TOGETHER_DEMO_AUTOSCALER_IMAGE is: source .demo/env "
                "(make demo writes both), or unset TOGETHER_DEMO_AUTOSCALER_IMAGE"
            )
        return value

    # The range as declared (the config), not the resource's outputs: a floor lowered inside
    # the live target changes no output (the provider leaves a live target in range alone), yet
    # the controller must get the new floor, as scripts/demo-autoscaler.sh gives it.
    ranged = sorted(
        (
            (name, declared[config_key(kind)][name], props)
            for kind in stack_config.in_declaration_order()
            for name, props in stack_config.props(kind).items()
            if props.get("max_preemptible_gpus") is not None
        ),
        key=lambda item: item[0],
    )
    for name, ranged_resource, props in ranged[:1]:
        PreemptibleAutoscaler(
            f"{name}-autoscaler",
            PreemptibleAutoscalerArgs(
                cluster=ranged_resource,
                min_preemptible_gpus=int(props.get("num_preemptible_gpus") or 0),
                max_preemptible_gpus=int(props["max_preemptible_gpus"]),
                api_key=pulumi.Output.secret(demo_setting("TOGETHER_API_KEY")),
                image=demo_image,
                base_url=demo_setting("TOGETHER_DEMO_AUTOSCALER_BASE_URL"),
                # One replica: the demo's real standard node is one small machine's share.
                replicas=1,
                scan_interval_seconds=float(demo_setting("DEMO_AUTOSCALER_SCAN_SECONDS", "2")),
                scale_down_unneeded_seconds=float(
                    demo_setting("DEMO_AUTOSCALER_UNNEEDED_SECONDS", "20")
                ),
            ),
            opts=pulumi.ResourceOptions(
                providers=[
                    # A cluster update leaves its kubeconfig unknown until it is applied, which
                    # a preview would show as a new provider, replacing every resource here;
                    # the same cluster keeps its kubeconfig, so the change is ignored.
                    cluster_provider(
                        f"{name}-kubernetes",
                        ranged_resource,
                        opts=pulumi.ResourceOptions(ignore_changes=["kubeconfig"]),
                    )
                ]
            ),
        )
