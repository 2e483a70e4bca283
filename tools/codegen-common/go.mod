module local.invalid/codegen-common

go 1.26.6

require (
	github.com/blang/semver v3.5.1+incompatible
	github.com/pulumi/pulumi/pkg/v3 v3.248.0
)
