package release

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// everyWorkload has one object of each pod-bearing kind (and one that is
// not), with init, regular and ephemeral containers.
const everyWorkload = `apiVersion: v1
kind: ConfigMap
metadata: {name: x, namespace: ns}
data:
  image: not/an/image:1
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ns}
spec:
  template:
    spec:
      initContainers:
      - {name: init, image: "r.example/init:1"}
      containers:
      - {name: manager, image: "r.example/manager:1"}
      - {name: noimage}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds, namespace: ns}
spec:
  template:
    spec:
      containers:
      - {name: agent, image: "r.example/agent:1"}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: st, namespace: ns}
spec:
  template:
    spec:
      containers:
      - {name: db, image: "r.example/db:1"}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs, namespace: ns}
spec:
  template:
    spec:
      containers:
      - {name: r, image: "r.example/rs:1"}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns}
spec:
  template:
    spec:
      containers:
      - {name: job, image: "r.example/job:1"}
      - {name: defaulted, image: "${JOB_IMAGE:=r.example/job:2}"}
      - {name: required, image: "r.example/${JOB_REPO}:1"}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: cj}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          initContainers:
          - {name: wait, image: "r.example/wait:1"}
          containers:
          - {name: cron, image: "r.example/cron:1"}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns}
spec:
  containers:
  - {name: pod, image: "r.example/pod:1"}
  ephemeralContainers:
  - {name: debug, image: "r.example/debug:1"}
`

func TestComponentImages_EveryPodBearingKindAndContainerList(t *testing.T) {
	uses, err := ComponentImages("infrastructure-x", "infrastructure-components.yaml", []byte(everyWorkload))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Object, Container, Field, Image, Pulls string
		Clusterctl                             bool
	}
	var got []row
	for _, u := range uses {
		if u.Provider != "infrastructure-x" || u.File != "infrastructure-components.yaml" {
			t.Errorf("use %v names another provider or file", u)
		}
		got = append(got, row{u.Object, u.Container, u.Field, u.Image, u.Pulls, u.Clusterctl})
	}
	want := []row{
		{"Deployment ns/d", "init", "spec.template.spec.initContainers[0]", "r.example/init:1", "r.example/init:1", true},
		{"Deployment ns/d", "manager", "spec.template.spec.containers[0]", "r.example/manager:1", "r.example/manager:1", true},
		{"DaemonSet ns/ds", "agent", "spec.template.spec.containers[0]", "r.example/agent:1", "r.example/agent:1", true},
		{"StatefulSet ns/st", "db", "spec.template.spec.containers[0]", "r.example/db:1", "r.example/db:1", false},
		{"ReplicaSet ns/rs", "r", "spec.template.spec.containers[0]", "r.example/rs:1", "r.example/rs:1", false},
		{"Job ns/j", "job", "spec.template.spec.containers[0]", "r.example/job:1", "r.example/job:1", false},
		{"Job ns/j", "defaulted", "spec.template.spec.containers[1]", "${JOB_IMAGE:=r.example/job:2}", "r.example/job:2", false},
		{"Job ns/j", "required", "spec.template.spec.containers[2]", "r.example/${JOB_REPO}:1", "", false},
		{"CronJob cj", "wait", "spec.jobTemplate.spec.template.spec.initContainers[0]", "r.example/wait:1", "r.example/wait:1", false},
		{"CronJob cj", "cron", "spec.jobTemplate.spec.template.spec.containers[0]", "r.example/cron:1", "r.example/cron:1", false},
		{"Pod ns/p", "pod", "spec.containers[0]", "r.example/pod:1", "r.example/pod:1", false},
		{"Pod ns/p", "debug", "spec.ephemeralContainers[0]", "r.example/debug:1", "r.example/debug:1", false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("uses (-want +got):\n%s", diff)
	}
}

func TestComponentImages_BadYAMLNamesTheFile(t *testing.T) {
	_, err := ComponentImages("infrastructure-x", "infrastructure-components.yaml", []byte("kind: Deployment\nspec: [\n"))
	if err == nil || err.Error()[:len("infrastructure-x infrastructure-components.yaml: ")] != "infrastructure-x infrastructure-components.yaml: " {
		t.Fatalf("err = %v, want the provider and file named", err)
	}
}
