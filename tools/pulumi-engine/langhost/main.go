// Command pulumi-language-python is a small Python language host for the Pulumi engine.
//
// Why it exists: the upstream host lives in its own Go module
// (github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3), which has no tags and which
// the Go module proxy reachable here does not serve. Everything the host needs to run a program is
// in the served sdk/v3 module (the gRPC contract, the Python toolchain resolver and the
// pulumi-language-python-exec shim), so this host wires those together, following the upstream
// host's behaviour (sdk/python/cmd/pulumi-language-python/main.go in pulumi/pulumi): runtime
// options validated the same way, config passed the same way, `Cancel`, `About`,
// `GetProgramDependencies`, `InstallDependencies`, `RunPlugin` (Python policy packs and plugins,
// plugin.go), and an exit when the engine's health check fails. Code generation, `pulumi new`
// templates and debugging are not supported.
//
// This file is the command line; host.go holds the Python RPC methods and options.go the runtime
// options of Pulumi.yaml. The process lifecycle and the RPCs both our hosts share are in
// tools/langhost-common.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	langhost "local.invalid/langhost-common"
)

// extras are what this host does that upstream's does not, as `-together-extras` lists them (one
// per line). The tests of these behaviours ask for them and skip, naming the missing one, when the
// engine runs upstream's host (a release Pulumi first on PATH): its flag parser rejects the
// unknown flag, so it lists none.
var extras = []string{
	// Cancel ends the host (upstream's Cancel does not).
	"cancel-exits",
	// TOGETHER_LANGHOST_HEALTH_INTERVAL sets how often the engine is probed (upstream: 5 minutes).
	"health-interval",
}

func main() {
	flags := langhost.NewFlags("virtualenv", "root", "typechecker", "toolchain")
	executor := flags.Set.String("use-executor", "", "path to pulumi-language-python-exec")
	showExtras := flags.Set.Bool("together-extras", false, "print what this host adds to upstream's, one per line, and exit")
	engine := flags.Parse()
	if *showExtras {
		fmt.Println(strings.Join(extras, "\n"))
		return
	}
	if *executor == "" {
		self, err := os.Executable()
		if err != nil {
			langhost.Fatal("could not determine the current executable: %v", err)
		}
		if resolved, err := filepath.EvalSymlinks(self); err == nil {
			self = resolved
		}
		*executor = filepath.Join(filepath.Dir(self), "pulumi-language-python-exec")
	}
	if _, err := os.Stat(*executor); err != nil {
		langhost.Fatal("missing executor %s", *executor)
	}
	langhost.Serve(engine, *flags.Tracing, func(base *langhost.Host) pulumirpc.LanguageRuntimeServer {
		return &host{Host: base, executor: *executor}
	})
}
