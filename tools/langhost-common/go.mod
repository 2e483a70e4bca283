module local.invalid/langhost-common

go 1.26.6

require (
	github.com/pulumi/pulumi/sdk/v3 v3.248.0
	google.golang.org/grpc v1.81.1
	google.golang.org/protobuf v1.36.11
)
