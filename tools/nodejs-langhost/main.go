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
// This file is the process lifecycle; host.go holds the RPC methods and options.go the runtime
// options.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/version"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
)

// healthInterval is how often the engine is probed; when a probe fails (the CLI died, even by
// SIGKILL) the host stops. Upstream probes every 5 minutes; TOGETHER_LANGHOST_HEALTH_INTERVAL
// (a Go duration such as "200ms") shortens it, as for our Python host.
func healthInterval() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("TOGETHER_LANGHOST_HEALTH_INTERVAL")); err == nil && d > 0 {
		return d
	}
	return 5 * time.Minute
}

// lifecycle ends the host once: on SIGINT, on a failed health check or on the Cancel RPC. The
// gRPC server then stops gracefully (a running program is allowed to finish).
type lifecycle struct {
	ctx    context.Context
	stop   context.CancelFunc
	closed chan bool
	once   sync.Once
}

func newLifecycle() *lifecycle {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	l := &lifecycle{ctx: ctx, stop: stop, closed: make(chan bool)}
	go func() {
		<-ctx.Done()
		l.once.Do(func() { close(l.closed) })
	}()
	return l
}

// watchEngine starts the health check of the engine at addr.
func (l *lifecycle) watchEngine(addr string) error {
	if addr == "" {
		return nil
	}
	return rpcutil.Healthcheck(l.ctx, addr, healthInterval(), l.stop)
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "fatal: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	fs := flag.NewFlagSet(os.Args[0], flag.ContinueOnError)
	tracing := fs.String("tracing", "", "emit tracing to a Zipkin-compatible endpoint")
	showVersion := fs.Bool("version", false, "print the version and exit")
	// Accepted as upstream accepts them: obsolete flags (the options now come from Pulumi.yaml
	// through ProgramInfo) and the logging flags the engine passes to every plugin.
	fs.Bool("typescript", true, "[obsolete] use the runtime options in Pulumi.yaml")
	for _, name := range []string{"root", "tsconfig", "nodeargs", "packagemanager"} {
		fs.String(name, "", "[obsolete] use the runtime options in Pulumi.yaml")
	}
	fs.Bool("logtostderr", false, "log to stderr")
	fs.Bool("logflow", false, "flow logging settings to child processes")
	fs.Int("v", 0, "log verbosity")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *showVersion {
		fmt.Println(version.Version)
		return
	}
	engine := ""
	if fs.NArg() > 0 {
		engine = strings.TrimSpace(fs.Arg(0))
	}

	life := newLifecycle()
	if err := life.watchEngine(engine); err != nil {
		fatal("could not start the health check of the engine at %s: %v", engine, err)
	}
	h := &host{engineAddress: engine, tracing: *tracing, life: life}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Cancel: life.closed,
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, h)
			return nil
		},
	})
	if err != nil {
		fatal("could not start the language host RPC server: %v", err)
	}
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		fatal("language host RPC stopped serving: %v", err)
	}
}
