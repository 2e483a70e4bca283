package main

import (
	"context"
	"io"
	"os"
	"strconv"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/pulumi/pulumi/sdk/v3/python/toolchain"
	langhost "local.invalid/langhost-common"
)

// host is the Python language host: the shared RPCs (tools/langhost-common) and Python's.
type host struct {
	*langhost.Host
	executor string
}

// GetRequiredPackages makes sure the program's virtualenv exists first, as upstream does (a fresh
// clone's first `pulumi up` creates it and installs requirements.txt), then reports no
// packages: plugins in this project are found on PATH or next to the CLI. (Upstream lists the
// installed pulumi-* packages here so that the CLI can download their plugins.)
func (h *host) GetRequiredPackages(
	ctx context.Context, req *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	tc, _, err := resolve(req.GetInfo())
	if err != nil {
		return nil, err
	}
	if err := tc.EnsureVenv(ctx, req.GetInfo().GetProgramDirectory(), false, true,
		os.Stderr, os.Stderr); err != nil {
		return nil, err
	}
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

func (h *host) GetRequiredPlugins(
	context.Context, *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

// About reports the interpreter `pulumi about` shows; with no program info, the default one.
func (h *host) About(ctx context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	opts := toolchain.PythonOptions{Toolchain: toolchain.Pip}
	if req.GetInfo() != nil {
		parsed, err := parseOptions(req.GetInfo())
		if err != nil {
			return nil, err
		}
		opts = parsed
	}
	tc, err := toolchain.ResolveToolchain(opts)
	if err != nil {
		return nil, err
	}
	info, err := tc.About(ctx)
	if err != nil {
		return nil, err
	}
	return &pulumirpc.AboutResponse{
		Executable: info.PythonExecutable,
		Version:    info.PythonVersion.String(),
	}, nil
}

// GetProgramDependencies lists the packages installed in the program's environment.
func (h *host) GetProgramDependencies(
	ctx context.Context, req *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	tc, _, err := resolve(req.GetInfo())
	if err != nil {
		return nil, err
	}
	return langhost.Dependencies(tc.ListPackages(ctx, req.GetTransitiveDependencies()))
}

// InstallDependencies is `pulumi install`: create the virtualenv and install requirements.txt.
func (h *host) InstallDependencies(
	req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	tc, _, err := resolve(req.GetInfo())
	if err != nil {
		return err
	}
	return langhost.InstallDependencies(req, server, func(stdout, stderr io.Writer) error {
		return tc.InstallDependencies(server.Context(), req.GetInfo().GetProgramDirectory(),
			req.GetUseLanguageVersionTools(), true, stdout, stderr)
	})
}

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	info := req.GetInfo()
	tc, opts, err := resolve(info)
	if err != nil {
		return nil, err
	}
	if err := tc.ValidateVenv(ctx); err != nil {
		return nil, err
	}
	if err := typecheck(ctx, tc, opts); err != nil {
		return nil, err
	}

	args := []string{h.executor}
	add := func(flag, value string) {
		if value != "" {
			args = append(args, "--"+flag, value)
		}
	}
	add("monitor", req.GetMonitorAddress())
	add("engine", h.Engine())
	add("project", req.GetProject())
	add("root_directory", info.GetRootDirectory())
	add("stack", req.GetStack())
	add("pwd", req.GetPwd())
	add("dry_run", strconv.FormatBool(req.GetDryRun()))
	add("parallel", strconv.Itoa(int(req.GetParallel())))
	add("tracing", h.Tracing)
	add("organization", req.GetOrganization())
	args = append(args, info.GetEntryPoint())
	args = append(args, req.GetArgs()...)

	cmd, err := tc.Command(ctx, args...)
	if err != nil {
		return nil, err
	}
	env, err := langhost.ConfigEnv(req)
	if err != nil {
		return nil, err
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Dir = req.GetPwd()
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr

	return langhost.RunResult(cmd.Run(), "language executor"), nil
}
