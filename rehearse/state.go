package rehearse

import (
	"fmt"
	"strings"
)

// clusterctlRetries is how long clusterctl (v1.14) retries creating or
// patching an object before it gives up (cluster/client.go
// newWriteBackoff: about 159 s).
const clusterctlRetries = "about 2.5 minutes"

// wouldState is the state clusterctl upgrade apply would leave when the API
// server refuses New's CRDs: it scales Old's Deployments down and deletes
// Old's components (keeping the CRDs, namespaces and inventory) before it
// patches the first CRD (cluster/upgrader.go doUpgrade).
func wouldState(old, new string, providers []string) string {
	return fmt.Sprintf("nothing applied: the cluster still runs %s. clusterctl upgrade apply would scale %s's Deployments down and delete %s's components "+
		"(keeping its CRDs, namespaces and inventory entry), then retry the refused CRD for %s and fail with the refusal above: "+
		"%s would be left half-upgraded (%s's components deleted, %s's CRD refused, the inventory still saying %s)",
		old, old, old, clusterctlRetries, strings.Join(providers, ", "), old, new, old)
}

// applyState is what a failed clusterctl upgrade apply left.
type applyState struct {
	old, new  string
	providers []string
	// deleted and installing are what clusterctl logged: that it deleted
	// Old's components, that it began installing New's.
	deleted, installing bool
	// present of total are New's objects the cluster holds.
	present, total int
	// inventory is what clusterctl's inventory says (label@version).
	inventory []string
}

func (s applyState) String() string {
	inv := ""
	if len(s.inventory) > 0 {
		inv = "; the inventory says " + strings.Join(s.inventory, ", ")
	}
	who := strings.Join(s.providers, ", ")
	switch {
	case !s.deleted && !s.installing:
		return fmt.Sprintf("clusterctl changed nothing: the cluster still runs %s%s", s.old, inv)
	case !s.installing:
		return fmt.Sprintf("%s's components deleted (its CRDs, namespaces and inventory entry kept) and %s's not installed: %s is half-upgraded%s",
			s.old, s.new, who, inv)
	default:
		return fmt.Sprintf("%s's components deleted and %s's partly installed (%d of %d objects in the cluster): %s is half-upgraded%s",
			s.old, s.new, s.present, s.total, who, inv)
	}
}
