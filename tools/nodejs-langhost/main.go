// Command pulumi-language-nodejs is a small Node.js language host for the Pulumi engine: it runs
// TypeScript and JavaScript Pulumi programs.
//
// Why it exists: the upstream host lives in its own Go module
// (github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3), which the Go module proxy
// reachable here does not serve (403). The program itself is run by the entry point the
// @pulumi/pulumi npm package ships (`@pulumi/pulumi/cmd/run`, which registers ts-node for
// TypeScript), so a host only has to find that entry point in the program's node_modules and
// start `node` on it with the engine's arguments, as upstream's host does
// (sdk/nodejs/cmd/pulumi-language-nodejs/main.go in pulumi/pulumi): the same flags, the same
// PULUMI_CONFIG / PULUMI_CONFIG_SECRET_KEYS environment, the same runtime options of Pulumi.yaml
// (`typescript`, `tsconfig`, `nodeargs`, `packagemanager`) and the same exit code 32 for "the
// program already reported its error". The sdk/v3 module provides the gRPC contract and the npm
// package-manager helpers.
//
// Not supported (upstream has them): the resource-monitor proxy with synchronous-invoke pipes
// (`--sync`; the SDK's asynchronous invokes work without it), code generation (see
// tools/ts-codegen), `pulumi new` templates, policy packs, Node.js plugins, debugging,
// `fnm`-managed Node versions and the out-of-memory hint.
//
// This file is the command line; host.go holds the Node.js RPC methods and options.go the runtime
// options. The process lifecycle and the RPCs both our hosts share are in tools/langhost-common.
package main

import (
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	langhost "local.invalid/langhost-common"
)

func main() {
	flags := langhost.NewFlags("root", "tsconfig", "nodeargs", "packagemanager")
	flags.Set.Bool("typescript", true, "[obsolete] use the runtime options in Pulumi.yaml")
	engine := flags.Parse()
	langhost.Serve(engine, *flags.Tracing, func(base *langhost.Host) pulumirpc.LanguageRuntimeServer {
		return &host{Host: base}
	})
}
