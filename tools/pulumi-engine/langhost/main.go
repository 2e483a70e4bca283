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
// This file is the process lifecycle; host.go holds the RPC methods and options.go the runtime
// options of Pulumi.yaml.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
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
// (a Go duration such as "200ms") shortens it for tests.
func healthInterval() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("TOGETHER_LANGHOST_HEALTH_INTERVAL")); err == nil && d > 0 {
		return d
	}
	return 5 * time.Minute
}

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

// watchEngine starts the health check of the engine at addr (once per address).
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
	executor := fs.String("use-executor", "", "path to pulumi-language-python-exec")
	showVersion := fs.Bool("version", false, "print the version and exit")
	showExtras := fs.Bool("together-extras", false, "print what this host adds to upstream's, one per line, and exit")
	// Accepted as upstream accepts them: obsolete flags (the options now come from Pulumi.yaml
	// through ProgramInfo) and the logging flags the engine passes to every plugin.
	for _, name := range []string{"virtualenv", "root", "typechecker", "toolchain"} {
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
	if *showExtras {
		fmt.Println(strings.Join(extras, "\n"))
		return
	}
	engine := ""
	if fs.NArg() > 0 {
		engine = strings.TrimSpace(fs.Arg(0))
	}
	if *executor == "" {
		self, err := os.Executable()
		if err != nil {
			fatal("could not determine the current executable: %v", err)
		}
		if resolved, err := filepath.EvalSymlinks(self); err == nil {
			self = resolved
		}
		*executor = filepath.Join(filepath.Dir(self), "pulumi-language-python-exec")
	}
	if _, err := os.Stat(*executor); err != nil {
		fatal("missing executor %s", *executor)
	}

	life := newLifecycle()
	if err := life.watchEngine(engine); err != nil {
		fatal("could not start the health check of the engine at %s: %v", engine, err)
	}
	h := &host{engineAddress: engine, tracing: *tracing, executor: *executor, life: life}
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
