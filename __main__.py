"""The GPU clusters of one environment, declared from its config (stacks/Pulumi.<stack>.yaml). A
bad config fails here, before any resource is registered, with every problem listed; each kind's
map, what it attaches and what it exports come from `registry.KINDS`."""

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
