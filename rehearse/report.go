package rehearse

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Report is what a rehearsal did on the cluster and what clusterctl and
// the API server answered.
type Report struct {
	// Server is the API server's URL.
	Server string `json:"server"`
	// Old and New are the versions upgraded from and to; Providers the
	// labels of the providers upgraded.
	Old       string   `json:"old"`
	New       string   `json:"new"`
	Providers []string `json:"providers"`
	// Core lists the providers installed from the core release, as
	// label@version (empty when Old and New are core Cluster API's own).
	Core []string `json:"core,omitempty"`
	// CertManager says where cert-manager's CRDs came from: "cluster" (it
	// had them), or the version clusterctl installed from the rehearsal's
	// repository (CRDs and objects, without webhooks, nothing running).
	CertManager string `json:"certManager,omitempty"`
	// Served lists the components files the rehearsal's repository serves
	// differently from the releases (webhooks taken out, controllers
	// scaled down), for Core, Old and New alike.
	Served []Served `json:"served,omitempty"`
	// StandIns are the variables that got a stand-in (no real value was
	// given), as NAME=value: the components' and Old's templates'. A
	// refusal where one landed may be the stand-in's, not the release's.
	StandIns []string `json:"standIns,omitempty"`
	// Steps are the rehearsal's steps in order, with what each found.
	Steps []Step `json:"steps"`
	// Objects are the objects created from Old's flavors and ClusterClasses
	// and what became of each.
	Objects []*Object `json:"objects,omitempty"`
	// Failure says what failed, in clusterctl's or the server's words, and
	// the state it left; nil when the upgrade went through.
	Failure *Failure `json:"failure,omitempty"`
	// Created lists the namespaces the rehearsal created for the templates'
	// objects; Removed everything deleted at the end (those and what
	// clusterctl installed), as Kind/name, and Left what could not be (with
	// why).
	Created []string `json:"created,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Left    []string `json:"left,omitempty"`
	// Seconds is how long the rehearsal took, cleaning up included.
	Seconds float64 `json:"seconds"`
}

// Step is one step of the rehearsal.
type Step struct {
	// Name is init, objects, plan, check, apply, read back or no-op apply.
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
	// Seconds is how long the step took.
	Seconds float64 `json:"seconds"`
}

// Step statuses.
const (
	StatusOK      = "ok"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
)

// Failure is what made the upgrade fail.
type Failure struct {
	// Step is the step that failed.
	Step string `json:"step"`
	// Message is clusterctl's or the API server's own words.
	Message string `json:"message"`
	// State is the state the failure left the management cluster in, or
	// would have: a check before applying reports what clusterctl upgrade
	// apply would then have done.
	State string `json:"state"`
}

// Object is one object of Old's templates, from its creation to the end.
type Object struct {
	// File is provider/version/file, Object Kind/namespace/name (or
	// Kind/name), APIVersion the version it was created in.
	File       string `json:"file"`
	Object     string `json:"object"`
	APIVersion string `json:"apiVersion"`
	// Created is false when the server refused it or does not serve its
	// kind; NotCreated says why, in the server's words.
	Created    bool   `json:"created"`
	NotCreated string `json:"notCreated,omitempty"`
	UID        string `json:"uid,omitempty"`
	// ReadBack is what reading it back after the upgrade found: "same uid",
	// or what went wrong (gone, another uid, its kind no longer served).
	ReadBack string `json:"readBack,omitempty"`
	// Changed is a JSON merge patch of what reading it back after the
	// upgrade shows changed (NEW's defaults, fields NEW's schema prunes);
	// only compared when it is read in the same version as before.
	Changed string `json:"changed,omitempty"`
	// NoOp is what a no-op server-side apply of the object in its storage
	// version after the upgrade got: "accepted", the server's refusal, or
	// why it was not judged.
	NoOp string `json:"noOp,omitempty"`
	// Refused is set when the read back or the no-op apply failed.
	Refused bool `json:"refused,omitempty"`
}

// Refusals counts the objects the upgrade broke.
func (r *Report) Refusals() int {
	n := 0
	for _, o := range r.Objects {
		if o.Refused {
			n++
		}
	}
	return n
}

// CreatedObjects counts the objects created from Old's templates.
func (r *Report) CreatedObjects() int {
	n := 0
	for _, o := range r.Objects {
		if o.Created {
			n++
		}
	}
	return n
}

// step records a step and how long it took since start.
func (r *Report) step(name, status, detail string, start time.Time) {
	r.Steps = append(r.Steps, Step{Name: name, Status: status, Detail: detail, Seconds: seconds(time.Since(start))})
}

func seconds(d time.Duration) float64 { return d.Round(10 * time.Millisecond).Seconds() }

// err is the error a failed rehearsal returns: what failed, in
// clusterctl's or the server's words, and the state it left.
func (r *Report) err() error {
	if r.Failure == nil {
		return nil
	}
	return fmt.Errorf("upgrade rehearsal: %s -> %s: %s: %s\n%s", r.Old, r.New, r.Failure.Step, r.Failure.Message, r.Failure.State)
}

// WriteText prints the report for people.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "upgrade rehearsal %s -> %s of %s on %s (clusterctl's client in process)\n", r.Old, r.New, strings.Join(r.Providers, ", "), r.Server)
	if len(r.Core) > 0 {
		fmt.Fprintf(&b, "  core: %s\n", strings.Join(r.Core, ", "))
	}
	switch r.CertManager {
	case "":
	case "cluster":
		b.WriteString("  cert-manager: the cluster's CRDs\n")
	default:
		fmt.Fprintf(&b, "  cert-manager: %s, installed by clusterctl from the rehearsal's repository\n", r.CertManager)
	}
	for _, s := range r.Served {
		if !s.Changed() {
			continue
		}
		var parts []string
		if n := len(s.Removed); n > 0 {
			parts = append(parts, fmt.Sprintf("%d webhook configurations taken out", n))
		}
		if n := len(s.NoConversion); n > 0 {
			parts = append(parts, fmt.Sprintf("%d conversion webhooks set to None", n))
		}
		if n := len(s.ScaledDown); n > 0 {
			parts = append(parts, fmt.Sprintf("%d workloads run no Pod", n))
		}
		fmt.Fprintf(&b, "  served %s/%s/%s: %s\n", s.Provider, s.Version, s.File, strings.Join(parts, ", "))
	}
	if len(r.StandIns) > 0 {
		fmt.Fprintf(&b, "  stand-ins (no real value given): %s\n", strings.Join(r.StandIns, ", "))
	}
	for _, s := range r.Steps {
		fmt.Fprintf(&b, "  %-12s %-7s %5.1fs  %s\n", s.Name, s.Status, s.Seconds, s.Detail)
	}
	for _, o := range r.Objects {
		switch {
		case !o.Created:
			fmt.Fprintf(&b, "    not created %s (%s): %s\n", o.Object, o.File, o.NotCreated)
		case o.Refused:
			fmt.Fprintf(&b, "    refused     %s (%s): read back: %s; no-op apply: %s\n", o.Object, o.File, o.ReadBack, o.NoOp)
		case o.Changed != "":
			fmt.Fprintf(&b, "    changed     %s (%s): %s\n", o.Object, o.File, o.Changed)
		}
	}
	if f := r.Failure; f != nil {
		fmt.Fprintf(&b, "  FAILED at %s: %s\n  state: %s\n", f.Step, f.Message, f.State)
	}
	if len(r.Left) > 0 {
		fmt.Fprintf(&b, "  left behind: %s\n", strings.Join(r.Left, ", "))
	}
	fmt.Fprintf(&b, "  %d objects created from %s's templates, %d refused after the upgrade; %.1fs in all\n", r.CreatedObjects(), r.Old, r.Refusals(), r.Seconds)
	b.WriteString("  not judged: no controller ran and no webhook was called (conversion included): the server's validation and clusterctl's upgrade only\n")
	_, err := io.WriteString(w, b.String())
	return err
}
