package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/google/shlex"
	"github.com/pulumi/pulumi/sdk/v3/nodejs/npm"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	langhost "local.invalid/langhost-common"
)

// runModule is the program runner @pulumi/pulumi ships; PULUMI_LANGUAGE_NODEJS_RUN_PATH
// overrides it, as upstream allows.
const runModule = "@pulumi/pulumi/cmd/run"

// host is the Node.js language host: the shared RPCs (tools/langhost-common) and Node.js's.
type host struct {
	*langhost.Host
}

// GetRequiredPackages reports no packages, as our Python host does: upstream lists the resource
// plugins of the SDKs in node_modules so that the CLI can download them, but `together` is
// downloadable from nowhere (the engine finds it on PATH or through `plugins.providers` in
// Pulumi.yaml), and listing it makes `pulumi install` fail trying to download it.
func (h *host) GetRequiredPackages(
	context.Context, *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

// About reports the `node` that runs programs.
func (h *host) About(ctx context.Context, _ *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("could not find node on PATH: %w", err)
	}
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("could not run %s --version: %w", node, err)
	}
	return &pulumirpc.AboutResponse{Executable: node, Version: strings.TrimSpace(string(out))}, nil
}

// GetProgramDependencies lists the npm packages installed for the program.
func (h *host) GetProgramDependencies(
	ctx context.Context, req *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	opts, err := parseOptions(req.GetInfo())
	if err != nil {
		return nil, err
	}
	dir := req.GetInfo().GetProgramDirectory()
	pm, err := npm.ResolvePackageManager(opts.packagemanager, dir)
	if err != nil {
		return nil, err
	}
	return langhost.Dependencies(pm.ListPackages(ctx, dir, req.GetTransitiveDependencies()))
}

// InstallDependencies is `pulumi install`: the package manager's install in the program
// directory (npm unless a lock file or the packagemanager option says otherwise).
func (h *host) InstallDependencies(
	req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	opts, err := parseOptions(req.GetInfo())
	if err != nil {
		return err
	}
	return langhost.InstallDependencies(req, server, func(stdout, stderr io.Writer) error {
		_, err := npm.Install(server.Context(), opts.packagemanager, req.GetInfo().GetProgramDirectory(),
			false, stdout, stderr)
		return err
	})
}

// locateRunner asks node where the program's @pulumi/pulumi keeps its runner, resolving from the
// program directory as `require` will, so the runner and the program share one @pulumi/pulumi.
func locateRunner(ctx context.Context, node, programDir string) (string, error) {
	module := os.Getenv("PULUMI_LANGUAGE_NODEJS_RUN_PATH")
	if module == "" {
		module = runModule
	}
	script := fmt.Sprintf("try { console.log(require.resolve(%q)); } catch (e) { "+
		"console.error(e.code === 'MODULE_NOT_FOUND' ? "+
		"'It looks like the Pulumi SDK has not been installed. Have you run pulumi install (or npm install)?' "+
		": e.message); process.exit(1); }", module)
	cmd := exec.CommandContext(ctx, node, "-e", script)
	cmd.Dir = programDir
	out, err := cmd.Output()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return "", errors.New(strings.TrimSpace(string(exitErr.Stderr)))
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	info := req.GetInfo()
	opts, err := parseOptions(info)
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return &pulumirpc.RunResponse{Error: "could not find node on PATH: " + err.Error()}, nil
	}
	runner, err := locateRunner(ctx, node, info.GetProgramDirectory())
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	nodeargs, err := shlex.Split(opts.nodeargs)
	if err != nil {
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("the nodejs runtime option nodeargs does not parse: %v", err)}, nil
	}
	args := append(nodeargs, runArguments(req, runner, h.Engine(), h.Tracing)...)

	env, err := runEnv(req, opts)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = info.GetProgramDirectory()
	// Node may switch its stdout/stderr to non-blocking mode; wrapping our files keeps exec from
	// handing them to the child directly (upstream does the same).
	cmd.Stdout = struct{ io.Writer }{os.Stdout}
	cmd.Stderr = struct{ io.Writer }{os.Stderr}

	return langhost.RunResult(cmd.Run(), "node"), nil
}

// runArguments is the runner's command line, as @pulumi/pulumi/cmd/run parses it (minimist):
// flags first, then the entry point ("." means package.json's main, or index.ts/index.js),
// then the program's own arguments.
func runArguments(req *pulumirpc.RunRequest, runner, engine, tracing string) []string {
	args := []string{runner}
	add := func(flag, value string) {
		if value != "" {
			args = append(args, "--"+flag, value)
		}
	}
	add("monitor", req.GetMonitorAddress())
	add("engine", engine)
	add("organization", req.GetOrganization())
	add("project", req.GetProject())
	add("stack", req.GetStack())
	add("root-directory", req.GetInfo().GetRootDirectory())
	add("pwd", req.GetInfo().GetProgramDirectory())
	if req.GetDryRun() {
		args = append(args, "--dry-run") // a boolean flag: a value after it would be the program
	}
	add("parallel", strconv.Itoa(int(req.GetParallel())))
	add("tracing", tracing)
	entry := req.GetInfo().GetEntryPoint()
	if entry == "" {
		entry = "."
	}
	args = append(args, entry)
	return append(args, req.GetArgs()...)
}

// runEnv passes stack config the way @pulumi/pulumi reads it (langhost.ConfigEnv; a stack with
// no config gets an empty object, as upstream's Node.js host passes it) and switches ts-node on
// for TypeScript.
func runEnv(req *pulumirpc.RunRequest, opts nodeOptions) ([]string, error) {
	env, err := langhost.ConfigEnv(req)
	if err != nil {
		return nil, err
	}
	if req.GetConfig() == nil {
		env = append(env, "PULUMI_CONFIG={}")
	}
	if opts.typescript {
		env = append(env, "PULUMI_NODEJS_TYPESCRIPT=true")
	}
	if opts.tsconfig != "" {
		env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+opts.tsconfig)
	}
	return env, nil
}
