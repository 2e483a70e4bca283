// Command pulumi-language-go is a small Go language host for the Pulumi engine: it builds a Go
// Pulumi program with the `go` on PATH and runs it.
//
// Why it exists: the upstream host lives in its own Go module
// (github.com/pulumi/pulumi/sdk/go/pulumi-language-go/v3), which the Go module proxy reachable
// here does not serve (403), as for our Python and Node.js hosts. A Go program carries its own
// runtime (the github.com/pulumi/pulumi/sdk/v3/go/pulumi package its go.mod pins), which reads
// everything it needs from its environment, so a host only has to `go build` the program
// directory and start the binary with that environment, as upstream's host does
// (sdk/go/pulumi-language-go/main.go in pulumi/pulumi): the same runtime options of Pulumi.yaml
// (`binary`, a prebuilt program on PATH; `buildTarget`, where to keep the built one), the same
// PULUMI_* variables, and the same exit code 32 for "the program already reported its error".
//
// Not supported (upstream has them): listing the plugins of the program's Go modules (as our
// other hosts, none are reported: `together` comes from `plugins.providers` in Pulumi.yaml or
// PATH), code generation (`pulumi import`, `pulumi convert`, `package gen-sdk`: see
// tools/go-codegen), `pulumi new` templates, policy packs and plugins written in Go (RunPlugin),
// debugging with Delve, and PULUMI_GO_USE_RUN. `pulumi install` runs `go mod download`, which
// keeps the program's pins, where upstream runs `go mod tidy`.
//
// This file is the command line; host.go holds the Go RPC methods and options.go the runtime
// options. The process lifecycle and the RPCs our hosts share are in tools/langhost-common.
package main

import (
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	langhost "local.invalid/langhost-common"
)

func main() {
	flags := langhost.NewFlags("binary", "buildTarget", "root")
	engine := flags.Parse()
	langhost.Serve(engine, *flags.Tracing, func(base *langhost.Host) pulumirpc.LanguageRuntimeServer {
		return &host{Host: base}
	})
}
