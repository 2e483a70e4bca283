package langhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/version"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/protobuf/types/known/emptypb"
)

// userActionableExit is the exit code both languages' program runners
// (pulumi-language-python-exec, @pulumi/pulumi/cmd/run) use after they have already reported the
// error to the engine; the engine must then not print a second error.
const userActionableExit = 32

// Host is the language-independent part of a language host: the engine's address, the tracing
// endpoint, and the RPCs that only concern the host process.
type Host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	Tracing string
	life    *lifecycle

	mu            sync.Mutex
	engineAddress string
}

// Engine is the engine's address, as given on the command line or by Handshake.
func (h *Host) Engine() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.engineAddress
}

func (h *Host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version.Version}, nil
}

// Handshake is how an engine that attaches to a running host (PULUMI_DEBUG_LANGUAGES) passes
// its address; the host then watches that engine as it watches one given on the command line.
func (h *Host) Handshake(
	_ context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	h.mu.Lock()
	previous := h.engineAddress
	if req.GetEngineAddress() != "" {
		h.engineAddress = req.GetEngineAddress()
	}
	h.mu.Unlock()
	if previous == "" && req.GetEngineAddress() != "" {
		if err := h.life.watchEngine(req.GetEngineAddress()); err != nil {
			return nil, fmt.Errorf("could not start the health check of the engine: %w", err)
		}
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

// Cancel is the engine asking the host to shut down (e.g. Ctrl-C during `pulumi up`): the host
// stops taking requests and exits once the running program, if any, has finished.
func (h *Host) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	h.life.stop()
	return &emptypb.Empty{}, nil
}

// Dependencies is GetProgramDependencies' answer for what a toolchain's listing returned: the
// packages it listed, or its error (err), so that a host returns Dependencies(tc.ListPackages(...)).
func Dependencies(
	packages []plugin.DependencyInfo, err error,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	if err != nil {
		return nil, fmt.Errorf("failed to list the program's dependencies: %w", err)
	}
	deps := make([]*pulumirpc.DependencyInfo, 0, len(packages))
	for _, p := range packages {
		deps = append(deps, &pulumirpc.DependencyInfo{Name: p.Name, Version: p.Version})
	}
	return &pulumirpc.GetProgramDependenciesResponse{Dependencies: deps}, nil
}

// InstallDependencies is `pulumi install`: install (the language's package installer) writes to
// the streams the engine shows, between the two progress lines upstream prints.
func InstallDependencies(
	req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer,
	install func(stdout, stderr io.Writer) error,
) error {
	closer, stdout, stderr, err := rpcutil.MakeInstallDependenciesStreams(server, req.GetIsTerminal())
	if err != nil {
		return err
	}
	defer closer.Close()
	fmt.Fprint(stdout, "Installing dependencies...\n\n")
	if err := install(stdout, stderr); err != nil {
		return err
	}
	fmt.Fprint(stdout, "Finished installing dependencies\n\n")
	return closer.Close()
}

// ConfigEnv is the stack's config as every SDK reads it from its environment: PULUMI_CONFIG, a
// JSON object, left out when the stack has no config (as upstream's Python and Go hosts do: JSON
// `null` would crash the Python SDK), and PULUMI_CONFIG_SECRET_KEYS, the JSON array of its secret
// keys (an empty array when there are none).
func ConfigEnv(req *pulumirpc.RunRequest) ([]string, error) {
	var env []string
	if cfg := req.GetConfig(); cfg != nil {
		raw, err := json.Marshal(cfg)
		if err != nil {
			return nil, fmt.Errorf("failed to serialize configuration: %w", err)
		}
		env = append(env, "PULUMI_CONFIG="+string(raw))
	}
	keys := req.GetConfigSecretKeys()
	if keys == nil {
		keys = []string{}
	}
	raw, err := json.Marshal(keys)
	if err != nil {
		return nil, fmt.Errorf("failed to serialize configuration secret keys: %w", err)
	}
	return append(env, "PULUMI_CONFIG_SECRET_KEYS="+string(raw)), nil
}

// RunResult is Run's answer once the program's process has ended with err (nil: success). A
// runner's exit 32 means it already reported the error (Bail: the engine prints nothing more);
// runner names what could not be started, for the error when the process never ran.
func RunResult(err error, runner string) *pulumirpc.RunResponse {
	if err == nil {
		return &pulumirpc.RunResponse{}
	}
	// A program that crashes early may leave output unflushed: flush ours first.
	_ = os.Stdout.Sync()
	_ = os.Stderr.Sync()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		if exitErr.ExitCode() == userActionableExit {
			return &pulumirpc.RunResponse{Bail: true}
		}
		return &pulumirpc.RunResponse{
			Error: fmt.Sprintf("program exited with non-zero exit code: %d", exitErr.ExitCode()),
		}
	}
	return &pulumirpc.RunResponse{
		Error: fmt.Sprintf("problem executing program (could not run %s): %v", runner, err),
	}
}
