// Package langhost is what our two Pulumi language hosts share: the Python one
// (tools/pulumi-engine/langhost) and the Node.js one (tools/nodejs-langhost). It holds the process
// lifecycle (flags, the gRPC server, SIGINT, the engine's health check, Cancel), the RPCs that do
// not depend on the language, and the helpers both hosts' Run, InstallDependencies and
// GetProgramDependencies use. Each host embeds *Host and adds its language's RPCs.
//
// It is its own module, which both hosts' go.mod reach by a `replace` directive; its requirements
// are the lower of the two hosts' pins (the Node.js host's sdk v3.248.0), so it never raises
// either host's versions. It has no go.sum: it is only ever built inside a host's module, whose
// go.sum covers it. Both build.sh list its files among their INPUTS: a change here rebuilds both
// hosts.
package langhost

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
// (a Go duration such as "200ms") shortens it for tests.
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

// watchEngine starts the health check of the engine at addr (once per address).
func (l *lifecycle) watchEngine(addr string) error {
	if addr == "" {
		return nil
	}
	return rpcutil.Healthcheck(l.ctx, addr, healthInterval(), l.stop)
}

// Fatal reports an error the host cannot start past and exits 1.
func Fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "fatal: "+format+"\n", args...)
	os.Exit(1)
}

// Flags is the command line the engine gives every language host. A host registers its own
// flags on Set before Parse.
type Flags struct {
	Set         *flag.FlagSet
	Tracing     *string
	showVersion *bool
}

// NewFlags registers the flags both hosts take, and accepts, as upstream does, the obsolete
// string flags named (the options now come from Pulumi.yaml through ProgramInfo) and the logging
// flags the engine passes to every plugin.
func NewFlags(obsolete ...string) *Flags {
	fs := flag.NewFlagSet(os.Args[0], flag.ContinueOnError)
	f := &Flags{
		Set:         fs,
		Tracing:     fs.String("tracing", "", "emit tracing to a Zipkin-compatible endpoint"),
		showVersion: fs.Bool("version", false, "print the version and exit"),
	}
	for _, name := range obsolete {
		fs.String(name, "", "[obsolete] use the runtime options in Pulumi.yaml")
	}
	fs.Bool("logtostderr", false, "log to stderr")
	fs.Bool("logflow", false, "flow logging settings to child processes")
	fs.Int("v", 0, "log verbosity")
	return f
}

// Parse parses the command line (exit 2 on a bad one), prints the version and exits 0 for
// -version, and returns the engine's address (the one argument; empty when the engine attaches
// later through Handshake).
func (f *Flags) Parse() string {
	if err := f.Set.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *f.showVersion {
		fmt.Println(version.Version)
		os.Exit(0)
	}
	if f.Set.NArg() > 0 {
		return strings.TrimSpace(f.Set.Arg(0))
	}
	return ""
}

// Serve runs the host until it is cancelled, interrupted or the engine at engine stops answering:
// it starts the health check, serves the server newServer builds around the shared Host, and
// prints the port, which is how the engine finds the host.
func Serve(engine, tracing string, newServer func(*Host) pulumirpc.LanguageRuntimeServer) {
	life := newLifecycle()
	if err := life.watchEngine(engine); err != nil {
		Fatal("could not start the health check of the engine at %s: %v", engine, err)
	}
	server := newServer(&Host{engineAddress: engine, Tracing: tracing, life: life})
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Cancel: life.closed,
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, server)
			return nil
		},
	})
	if err != nil {
		Fatal("could not start the language host RPC server: %v", err)
	}
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		Fatal("language host RPC stopped serving: %v", err)
	}
}
