package rehearse

import (
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	logf "sigs.k8s.io/cluster-api/cmd/clusterctl/log"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func schemaGVK(group, version, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
}

// clusterctlLogger is clusterctl's logger as it logs.
func clusterctlLogger() logr.Logger { return logf.Log }
