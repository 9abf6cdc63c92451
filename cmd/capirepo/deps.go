package main

// Imports that keep go.mod requirements of packages still being written.

import (
	_ "github.com/Masterminds/semver/v3"
	_ "github.com/cenkalti/backoff/v5"
	_ "github.com/drone/envsubst/v2"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/google/go-containerregistry/pkg/registry"
	_ "github.com/google/go-github/v82/github"
	_ "github.com/spf13/cobra"
	_ "gitlab.com/gitlab-org/api/client-go"
	_ "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	_ "sigs.k8s.io/kustomize/api/krusty"
	_ "sigs.k8s.io/kustomize/kyaml/filesys"
	_ "sigs.k8s.io/yaml"
)
