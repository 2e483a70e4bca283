// Command pulumi-language-python is a small Python language host for the Pulumi engine.
//
// Why it exists: the upstream host lives in its own Go module
// (github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3), which has no tags and which
// the Go module proxy reachable here does not serve. Everything the host needs to run a program is
// in the served sdk/v3 module (the gRPC contract, the Python toolchain resolver and the
// pulumi-language-python-exec shim), so this host wires those together. It implements what the
// CLI uses for `preview`, `up`, `refresh` and `destroy`: plugin info, required packages, Run.
// Code generation, `pulumi new` templates and policy packs are not supported.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/version"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/pulumi/pulumi/sdk/v3/python/toolchain"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
)

// userActionableExit is the exit code pulumi-language-python-exec uses after it has already
// reported the error to the engine; the engine must then not print a second error.
const userActionableExit = 32

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	engineAddress string
	tracing       string
	executor      string
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version.Version}, nil
}

func (h *host) Handshake(
	_ context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	if req.EngineAddress != "" {
		h.engineAddress = req.EngineAddress
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

// GetRequiredPackages reports nothing: plugins in this project are found on PATH or next to the
// CLI, and automatic plugin downloads are disabled, so there is nothing to pre-install.
func (h *host) GetRequiredPackages(
	context.Context, *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

func (h *host) GetRequiredPlugins(
	context.Context, *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	info := req.GetInfo()
	root, programDir, entry := req.GetPwd(), req.GetPwd(), req.GetProgram()
	var opts map[string]any
	if info != nil {
		root, programDir = info.GetRootDirectory(), info.GetProgramDirectory()
		if info.GetEntryPoint() != "" {
			entry = info.GetEntryPoint()
		}
		opts = info.GetOptions().AsMap()
	}
	tc, err := resolveToolchain(root, programDir, opts)
	if err != nil {
		return nil, err
	}

	args := []string{
		h.executor,
		"--monitor", req.GetMonitorAddress(),
		"--engine", h.engineAddress,
		"--project", req.GetProject(),
		"--stack", req.GetStack(),
		"--pwd", req.GetPwd(),
		"--dry_run", strconv.FormatBool(req.GetDryRun()),
		"--parallel", strconv.Itoa(int(req.GetParallel())),
		"--organization", req.GetOrganization(),
		"--root_directory", root,
	}
	if h.tracing != "" {
		args = append(args, "--tracing", h.tracing)
	}
	args = append(args, entry)
	args = append(args, req.GetArgs()...)

	cmd, err := tc.Command(ctx, args...)
	if err != nil {
		return nil, err
	}
	env, err := configEnv(req)
	if err != nil {
		return nil, err
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Dir = req.GetPwd()
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr

	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			if exitErr.ExitCode() == userActionableExit {
				return &pulumirpc.RunResponse{Bail: true}, nil
			}
			return &pulumirpc.RunResponse{
				Error: fmt.Sprintf("Program exited with non-zero exit code: %d", exitErr.ExitCode()),
			}, nil
		}
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	return &pulumirpc.RunResponse{}, nil
}

// resolveToolchain honours the `virtualenv` and `toolchain` runtime options of Pulumi.yaml; with
// neither, the interpreter is $PULUMI_PYTHON_CMD or python3, as with the upstream host.
func resolveToolchain(root, programDir string, opts map[string]any) (toolchain.Toolchain, error) {
	po := toolchain.PythonOptions{Root: root, ProgramDir: programDir, Toolchain: toolchain.Pip}
	if v, ok := opts["virtualenv"].(string); ok {
		po.Virtualenv = v
	}
	switch name, _ := opts["toolchain"].(string); name {
	case "", "pip":
	case "uv":
		po.Toolchain = toolchain.Uv
	case "poetry":
		po.Toolchain = toolchain.Poetry
	default:
		return nil, fmt.Errorf("unsupported Python toolchain %q (use pip, uv or poetry)", name)
	}
	return toolchain.ResolveToolchain(po)
}

// configEnv passes stack config the way the Python SDK reads it: PULUMI_CONFIG (a JSON object)
// and PULUMI_CONFIG_SECRET_KEYS (a JSON array).
func configEnv(req *pulumirpc.RunRequest) ([]string, error) {
	cfg, err := json.Marshal(req.GetConfig())
	if err != nil {
		return nil, err
	}
	keys := req.GetConfigSecretKeys()
	if keys == nil {
		keys = []string{}
	}
	secret, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	return []string{"PULUMI_CONFIG=" + string(cfg), "PULUMI_CONFIG_SECRET_KEYS=" + string(secret)}, nil
}

func main() {
	fs := flag.NewFlagSet(os.Args[0], flag.ContinueOnError)
	tracing := fs.String("tracing", "", "tracing endpoint")
	executor := fs.String("use-executor", "", "path to pulumi-language-python-exec")
	fs.Bool("logtostderr", false, "log to stderr")
	fs.Bool("logflow", false, "flow logging settings to child processes")
	fs.Int("v", 0, "log verbosity")
	fs.String("root", "", "project root (unused)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	engine := ""
	if fs.NArg() > 0 {
		engine = fs.Arg(fs.NArg() - 1)
	}
	if *executor == "" {
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintf(os.Stderr, "fatal: %v\n", err)
			os.Exit(1)
		}
		if resolved, err := filepath.EvalSymlinks(self); err == nil {
			self = resolved
		}
		*executor = filepath.Join(filepath.Dir(self), "pulumi-language-python-exec")
	}
	if _, err := os.Stat(*executor); err != nil {
		fmt.Fprintf(os.Stderr, "fatal: missing executor %s\n", *executor)
		os.Exit(1)
	}

	h := &host{engineAddress: strings.TrimSpace(engine), tracing: *tracing, executor: *executor}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, h)
			return nil
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "fatal: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		fmt.Fprintf(os.Stderr, "fatal: %v\n", err)
		os.Exit(1)
	}
}
