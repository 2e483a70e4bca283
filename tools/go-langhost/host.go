package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	langhost "local.invalid/langhost-common"
)

// host is the Go language host: the shared RPCs (tools/langhost-common) and Go's.
type host struct {
	*langhost.Host
}

// goBinary is the `go` on PATH, or an error saying what needs it.
func goBinary(what string) (string, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("could not find go on PATH, which %s needs: install Go (1.25 or newer)", what)
	}
	return gobin, nil
}

// GetRequiredPackages reports no packages, as our other hosts do: upstream lists the resource
// plugins of the Go modules the program requires so that the CLI can download them, but
// `together` is downloadable from nowhere (the engine finds it on PATH or through
// `plugins.providers` in Pulumi.yaml).
func (h *host) GetRequiredPackages(
	context.Context, *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

// About reports the `go` that builds programs.
func (h *host) About(ctx context.Context, _ *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	gobin, err := goBinary("pulumi about")
	if err != nil {
		return nil, err
	}
	out, err := exec.CommandContext(ctx, gobin, "env", "GOVERSION").Output()
	if err != nil {
		return nil, fmt.Errorf("could not run %s env GOVERSION: %w", gobin, err)
	}
	return &pulumirpc.AboutResponse{Executable: gobin, Version: strings.TrimSpace(string(out))}, nil
}

// goMod is what `go mod edit -json` prints of a go.mod that GetProgramDependencies reads.
type goMod struct {
	Require []struct {
		Path     string
		Version  string
		Indirect bool
	}
	Replace []struct {
		Old struct{ Path string }
	}
}

// GetProgramDependencies lists the modules the program's go.mod requires (the indirect ones
// only when asked for transitive dependencies); a module replaced by a directory has no
// version, as upstream reports it.
func (h *host) GetProgramDependencies(
	ctx context.Context, req *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	gobin, err := goBinary("listing the program's modules")
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, gobin, "mod", "edit", "-json")
	cmd.Dir = req.GetInfo().GetProgramDirectory()
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("could not read the program's go.mod (go mod edit -json): %w", err)
	}
	var mod goMod
	if err := json.Unmarshal(out, &mod); err != nil {
		return nil, fmt.Errorf("go mod edit -json printed what is not JSON: %w", err)
	}
	replaced := map[string]bool{}
	for _, r := range mod.Replace {
		replaced[r.Old.Path] = true
	}
	var packages []plugin.DependencyInfo
	for _, r := range mod.Require {
		if r.Indirect && !req.GetTransitiveDependencies() {
			continue
		}
		version := r.Version
		if replaced[r.Path] {
			version = ""
		}
		packages = append(packages, plugin.DependencyInfo{Name: r.Path, Version: version})
	}
	return langhost.Dependencies(packages, nil)
}

// InstallDependencies is `pulumi install`: `go mod download` in the program directory, which
// fetches exactly the versions go.mod and go.sum pin (upstream runs `go mod tidy`, which may
// rewrite them).
func (h *host) InstallDependencies(
	req *pulumirpc.InstallDependenciesRequest, server pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	return langhost.InstallDependencies(req, server, func(stdout, stderr io.Writer) error {
		gobin, err := goBinary("pulumi install")
		if err != nil {
			return err
		}
		cmd := exec.CommandContext(server.Context(), gobin, "mod", "download")
		cmd.Dir = req.GetInfo().GetProgramDirectory()
		cmd.Stdout, cmd.Stderr = stdout, stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("`go mod download` failed to install dependencies: %w", err)
		}
		return nil
	})
}

// build compiles the program directory with `go build` into target (a new temporary file when
// empty) and returns the binary's path and whether the caller must remove it. The compiler's
// messages go to the host's stderr, which the engine shows.
func build(ctx context.Context, programDir, target string) (string, bool, error) {
	if sources, _ := filepath.Glob(filepath.Join(programDir, "*.go")); len(sources) == 0 {
		return "", false, fmt.Errorf("no Go files in %s to build: a Go program is a main package beside Pulumi.yaml "+
			"(or in the directory its `main` names)", programDir)
	}
	gobin, err := goBinary("building the program")
	if err != nil {
		return "", false, err
	}
	temporary := target == ""
	if temporary {
		f, err := os.CreateTemp("", "pulumi-go.*")
		if err != nil {
			return "", false, fmt.Errorf("could not create the program's binary: %w", err)
		}
		target = f.Name()
		_ = f.Close()
	}
	cmd := exec.CommandContext(ctx, gobin, "build", "-o", target)
	cmd.Dir = programDir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		if temporary {
			_ = os.Remove(target)
		}
		return "", false, fmt.Errorf("`go build` of the program in %s failed (the compiler's messages are above): %w",
			programDir, err)
	}
	return target, temporary, nil
}

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	info := req.GetInfo()
	opts, err := parseOptions(info)
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	var program string
	if opts.binary != "" {
		if program, err = exec.LookPath(opts.binary); err != nil {
			return &pulumirpc.RunResponse{Error: fmt.Sprintf(
				"the go runtime option binary names %s, which is not an executable: %v", opts.binary, err)}, nil
		}
	} else {
		built, temporary, err := build(ctx, info.GetProgramDirectory(), opts.buildTarget)
		if err != nil {
			return &pulumirpc.RunResponse{Error: err.Error()}, nil
		}
		if temporary {
			defer os.Remove(built)
		}
		program = built
	}
	env, err := runEnv(req, h.Engine())
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, program)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = req.GetPwd()
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return langhost.RunResult(cmd.Run(), program), nil
}

// The environment the Go SDK reads in pulumi.Run: its Env* constants (sdk/v3/go/pulumi/run.go),
// named here rather than imported: importing that package compiles the Go SDK's runtime into the
// host (4 packages the Node.js host does not build: a fresh build took 79 s instead of 10 s on
// the busy 2-core machine) only to read these names (PULUMI_CONFIG and its secret keys come from
// langhost.ConfigEnv). test_native_go.py runs a program on them.
const (
	envOrganization  = "PULUMI_ORGANIZATION"
	envProject       = "PULUMI_PROJECT"
	envRootDirectory = "PULUMI_ROOT_DIRECTORY"
	envStack         = "PULUMI_STACK"
	envParallel      = "PULUMI_PARALLEL"
	envDryRun        = "PULUMI_DRY_RUN"
	envMonitor       = "PULUMI_MONITOR"
	envEngine        = "PULUMI_ENGINE"
)

// runEnv is the environment of the program: who it runs for, the stack's config (a JSON object)
// and its secret keys (a JSON array, PULUMI_CONFIG_SECRET_KEYS), and where the engine and the
// resource monitor listen. Empty values are left out, as upstream.
func runEnv(req *pulumirpc.RunRequest, engine string) ([]string, error) {
	env, err := langhost.ConfigEnv(req)
	if err != nil {
		return nil, err
	}
	add := func(name, value string) {
		if value != "" {
			env = append(env, name+"="+value)
		}
	}
	add(envOrganization, req.GetOrganization())
	add(envProject, req.GetProject())
	add(envRootDirectory, req.GetInfo().GetRootDirectory())
	add(envStack, req.GetStack())
	add(envDryRun, strconv.FormatBool(req.GetDryRun()))
	add(envParallel, strconv.Itoa(int(req.GetParallel())))
	add(envMonitor, req.GetMonitorAddress())
	add(envEngine, engine)
	return env, nil
}
