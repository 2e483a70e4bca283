module local.invalid/together-gpu-clusters/sdk/go

go 1.25.11

require (
	github.com/blang/semver v3.5.1+incompatible
	github.com/pulumi/pulumi/sdk/v3 v3.248.0
)
