package main

import (
	"errors"
	"fmt"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// goOptions are the runtime options of Pulumi.yaml (`runtime: {name: go, options: ...}`), with
// upstream's names and rules.
type goOptions struct {
	// binary is a prebuilt program (a name looked up on PATH, or a path) run instead of building.
	binary string
	// buildTarget is where the built program is written and kept; empty: a temporary file,
	// removed after the run.
	buildTarget string
}

// parseOptions validates the options as upstream does: a value that is not a string is an error
// naming the option, and the two options exclude each other.
func parseOptions(info *pulumirpc.ProgramInfo) (goOptions, error) {
	var opts goOptions
	raw := info.GetOptions().AsMap()
	for name, target := range map[string]*string{"binary": &opts.binary, "buildTarget": &opts.buildTarget} {
		if value, ok := raw[name]; ok {
			s, ok := value.(string)
			if !ok {
				return opts, fmt.Errorf("the go runtime option %s must be a string, not %v", name, value)
			}
			*target = s
		}
	}
	if opts.binary != "" && opts.buildTarget != "" {
		return opts, errors.New("the go runtime options binary and buildTarget cannot both be set: " +
			"binary runs a program built beforehand, buildTarget keeps the one the host builds")
	}
	return opts, nil
}
