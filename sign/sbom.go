package sign

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// SBOMSuffix ends the name of a CycloneDX SBOM asset.
const SBOMSuffix = ".cdx.json"

// ImageSBOMFile is the name of the manager image's SBOM asset.
const ImageSBOMFile = "manager-image" + SBOMSuffix

// SBOMOptions say what every SBOM records of how it was made.
type SBOMOptions struct {
	// Created is metadata.timestamp ($SOURCE_DATE_EPOCH, for the same
	// bytes from the same build); zero leaves the timestamp out.
	Created time.Time
	// Tool is capirepo's version, recorded as the tool that wrote the SBOM.
	Tool string
}

// Binary is a Go binary an SBOM describes.
type Binary struct {
	// Path is the file; Platform is os/arch[/variant].
	Path, Platform string
}

// BinarySBOM is the CycloneDX (1.6, JSON) SBOM of a Go binary, from the
// build information the Go linker embeds (debug/buildinfo): the main
// module with the binary's sha256 and its build settings, the Go standard
// library, and every module linked in with its version and go.sum hash. A
// binary records which modules are linked, not the edges between them, so
// the main module depends on each directly. The same binary gives the same
// bytes.
func BinarySBOM(b Binary, o SBOMOptions) ([]byte, error) {
	main, comps, err := goComponents(b)
	if err != nil {
		return nil, err
	}
	bom := newBOM(o, main)
	bom.SerialNumber = serialFrom(main.Hashes)
	setComponents(bom, comps, map[string][]string{main.BOMRef: refs(comps)})
	return encodeBOM(bom)
}

// ImageSBOM is the CycloneDX SBOM of the manager image: the image (by its
// index digest), the base image it was built on (by digest), and for each
// platform the manager binary and the Go modules in it.
func ImageSBOM(image, digest, base, baseDigest string, bins []Binary, o SBOMOptions) ([]byte, error) {
	name, _, _ := strings.Cut(image, "@")
	imgRef := "pkg:oci/" + escape(lastElem(name)) + "@" + escape(digest) + "?repository_url=" + escape(name)
	sha, _ := strings.CutPrefix(digest, "sha256:")
	main := cdx.Component{BOMRef: imgRef, Type: cdx.ComponentTypeContainer, Name: name, Version: digest, PackageURL: imgRef,
		Hashes: &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: sha}}}
	var comps []cdx.Component
	deps := map[string][]string{}
	if base != "" {
		baseName, _, _ := strings.Cut(base, "@")
		ref := "pkg:oci/" + escape(lastElem(baseName)) + "@" + escape(baseDigest) + "?repository_url=" + escape(baseName)
		bsha, _ := strings.CutPrefix(baseDigest, "sha256:")
		comps = append(comps, cdx.Component{BOMRef: ref, Type: cdx.ComponentTypeContainer, Name: baseName, Version: baseDigest, PackageURL: ref,
			Hashes:     &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: bsha}},
			Properties: &[]cdx.Property{{Name: "capirepo:image:role", Value: "base"}}})
		deps[imgRef] = append(deps[imgRef], ref)
	}
	seen := map[string]bool{}
	for _, b := range bins {
		bm, mods, err := goComponents(b)
		if err != nil {
			return nil, err
		}
		comps = append(comps, bm)
		deps[imgRef] = append(deps[imgRef], bm.BOMRef)
		deps[bm.BOMRef] = refs(mods)
		for _, m := range mods {
			if !seen[m.BOMRef] {
				seen[m.BOMRef] = true
				comps = append(comps, m)
			}
		}
	}
	bom := newBOM(o, main)
	bom.SerialNumber = serialFrom(main.Hashes)
	setComponents(bom, comps, deps)
	return encodeBOM(bom)
}

// goComponents reads a Go binary: its main module as an application
// component, and the standard library and linked modules as libraries.
func goComponents(b Binary) (cdx.Component, []cdx.Component, error) {
	bi, err := buildinfo.ReadFile(b.Path)
	if err != nil {
		return cdx.Component{}, nil, fmt.Errorf("%s: no Go build information: %w", b.Path, err)
	}
	data, err := os.ReadFile(b.Path)
	if err != nil {
		return cdx.Component{}, nil, err
	}
	sum := sha256.Sum256(data)
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	goos, goarch := settings["GOOS"], settings["GOARCH"]
	ref := purl(bi.Main.Path, bi.Main.Version, goos, goarch)
	main := cdx.Component{BOMRef: ref, Type: cdx.ComponentTypeApplication, Name: bi.Main.Path, Version: bi.Main.Version, PackageURL: ref,
		Hashes: &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: hex.EncodeToString(sum[:])}}}
	props := []cdx.Property{{Name: "capirepo:binary:file", Value: filepath.Base(b.Path)}}
	if b.Platform != "" {
		props = append(props, cdx.Property{Name: "capirepo:binary:platform", Value: b.Platform})
	}
	// An allowlist: -ldflags and -tags can carry anything a release job put there.
	for _, k := range []string{"GOOS", "GOARCH", "GOAMD64", "GOARM", "GOARM64", "CGO_ENABLED", "-buildmode", "-compiler", "-trimpath",
		"vcs", "vcs.revision", "vcs.time", "vcs.modified"} {
		if v, ok := settings[k]; ok {
			props = append(props, cdx.Property{Name: "capirepo:gomod:build:" + k, Value: v})
		}
	}
	main.Properties = &props
	// The standard library is linked into every binary and is what most Go
	// vulnerabilities are filed against.
	goVersion := strings.TrimPrefix(bi.GoVersion, "go")
	stdRef := "pkg:golang/stdlib@" + escape(goVersion)
	comps := []cdx.Component{{BOMRef: stdRef, Type: cdx.ComponentTypeLibrary, Name: "stdlib", Version: bi.GoVersion, PackageURL: stdRef}}
	for _, d := range bi.Deps {
		m := d
		var mprops []cdx.Property
		if d.Replace != nil { // the code linked is the replacement's
			m = d.Replace
			mprops = append(mprops, cdx.Property{Name: "capirepo:gomod:module:replaces", Value: d.Path + "@" + d.Version})
		}
		r := purl(m.Path, m.Version, "", "")
		c := cdx.Component{BOMRef: r, Type: cdx.ComponentTypeLibrary, Name: m.Path, Version: m.Version, PackageURL: r, Scope: cdx.ScopeRequired}
		if h, ok := h1SHA256(m.Sum); ok {
			// go.sum's h1: is base64 of a SHA-256 over the module's file
			// list (Go's dirhash), not of a download; the raw value is kept too.
			c.Hashes = &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: h}}
			mprops = append(mprops, cdx.Property{Name: "capirepo:gomod:module:h1", Value: m.Sum})
		}
		if len(mprops) > 0 {
			c.Properties = &mprops
		}
		comps = append(comps, c)
	}
	slices.SortFunc(comps, func(a, b cdx.Component) int { return strings.Compare(a.BOMRef, b.BOMRef) })
	return main, comps, nil
}

func newBOM(o SBOMOptions, main cdx.Component) *cdx.BOM {
	bom := cdx.NewBOM()
	bom.Metadata = &cdx.Metadata{
		Lifecycles: &[]cdx.Lifecycle{{Phase: cdx.LifecyclePhasePostBuild}},
		Tools:      &cdx.ToolsChoice{Components: &[]cdx.Component{{Type: cdx.ComponentTypeApplication, Name: "capirepo", Version: o.Tool}}},
		Component:  &main,
	}
	if !o.Created.IsZero() {
		bom.Metadata.Timestamp = o.Created.UTC().Format(time.RFC3339)
	}
	return bom
}

func setComponents(bom *cdx.BOM, comps []cdx.Component, deps map[string][]string) {
	bom.Components = &comps
	all := []cdx.Dependency{}
	for _, r := range slices.Sorted(maps.Keys(deps)) {
		on := slices.Clone(deps[r])
		slices.Sort(on)
		all = append(all, cdx.Dependency{Ref: r, Dependencies: &on})
	}
	for _, c := range comps {
		if _, ok := deps[c.BOMRef]; !ok {
			all = append(all, cdx.Dependency{Ref: c.BOMRef}) // edges unknown from a binary
		}
	}
	bom.Dependencies = &all
}

func refs(comps []cdx.Component) []string {
	out := make([]string, len(comps))
	for i, c := range comps {
		out[i] = c.BOMRef
	}
	return out
}

func encodeBOM(bom *cdx.BOM) ([]byte, error) {
	var buf bytes.Buffer
	enc := cdx.NewBOMEncoder(&buf, cdx.BOMFileFormatJSON).SetPretty(true).SetEscapeHTML(false)
	if err := enc.EncodeVersion(bom, cdx.SpecVersion1_6); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// purl is pkg:golang/<module>@<version>. The module path keeps its case:
// Go module paths are case-sensitive (github.com/Masterminds/semver/v3).
func purl(module, version, goos, goarch string) string {
	segs := strings.Split(module, "/")
	for i, s := range segs {
		segs[i] = escape(s)
	}
	p := "pkg:golang/" + strings.Join(segs, "/")
	if version != "" {
		p += "@" + escape(version)
	}
	var q []string
	if goarch != "" {
		q = append(q, "goarch="+escape(goarch))
	}
	if goos != "" {
		q = append(q, "goos="+escape(goos))
	}
	if len(q) > 0 {
		p += "?" + strings.Join(q, "&")
	}
	return p
}

// escape percent-encodes all but the purl spec's unreserved characters.
func escape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '-', c == '_', c == '~':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func lastElem(name string) string {
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	name, _, _ = strings.Cut(name, ":")
	return name
}

func h1SHA256(sum string) (string, bool) {
	b64, ok := strings.CutPrefix(sum, "h1:")
	if !ok {
		return "", false
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != sha256.Size {
		return "", false
	}
	return hex.EncodeToString(raw), true
}

// serialFrom is a version-8 UUID made from the subject's sha256, so the
// same binary or image gives the same serial number.
func serialFrom(hashes *[]cdx.Hash) string {
	var sum []byte
	if hashes != nil && len(*hashes) > 0 {
		sum, _ = hex.DecodeString((*hashes)[0].Value)
	}
	if len(sum) < 16 {
		s := sha256.Sum256(sum)
		sum = s[:]
	}
	u := slices.Clone(sum[:16])
	u[6] = u[6]&0x0f | 0x80
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u)
	return fmt.Sprintf("urn:uuid:%s-%s-%s-%s-%s", h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])
}
