package sign_test

import (
	"bytes"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/hex"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"

	"github.com/capirepo/capirepo/sign"
)

func decodeBOM(t *testing.T, data []byte) *cdx.BOM {
	t.Helper()
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(data), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		t.Fatal(err)
	}
	return &bom
}

// goBinary builds testdata/gobin: a Go binary that links one module (a
// test binary records no modules in its build information).
func goBinary(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "manager-"+runtime.GOOS+"-"+runtime.GOARCH)
	out, err := exec.Command("go", "build", "-o", exe, "./testdata/gobin").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return exe
}

func TestBinarySBOM(t *testing.T) {
	exe := goBinary(t)
	bi, err := buildinfo.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	o := sign.SBOMOptions{Created: time.Unix(1700000000, 0), Tool: "v1.2.3"}
	b := sign.Binary{Path: exe, Platform: runtime.GOOS + "/" + runtime.GOARCH}
	data, err := sign.BinarySBOM(b, o)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := sign.BinarySBOM(b, o)
	if !bytes.Equal(data, again) {
		t.Error("two SBOMs of one binary differ")
	}
	bom := decodeBOM(t, data)
	if bom.SpecVersion != cdx.SpecVersion1_6 || bom.Metadata.Timestamp != "2023-11-14T22:13:20Z" || (*bom.Metadata.Tools.Components)[0].Version != "v1.2.3" {
		t.Errorf("spec %v, timestamp %q", bom.SpecVersion, bom.Metadata.Timestamp)
	}
	main := bom.Metadata.Component
	if main.Name != bi.Main.Path || !strings.Contains(main.PackageURL, "goos="+runtime.GOOS) || len((*main.Hashes)[0].Value) != 64 {
		t.Errorf("main component %+v", main)
	}
	byName := map[string]cdx.Component{}
	for _, c := range *bom.Components {
		byName[c.Name] = c
	}
	if std := byName["stdlib"]; std.Version != bi.GoVersion {
		t.Errorf("stdlib = %+v", std)
	}
	i := slices.IndexFunc(bi.Deps, func(d *debug.Module) bool { return d.Path == "github.com/CycloneDX/cyclonedx-go" })
	if i < 0 {
		t.Fatal("the test binary links no cyclonedx-go")
	}
	dep := bi.Deps[i]
	c, ok := byName[dep.Path]
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(dep.Sum, "h1:"))
	if !ok || c.Version != dep.Version || (*c.Hashes)[0].Value != hex.EncodeToString(raw) || c.PackageURL != "pkg:golang/github.com/CycloneDX/cyclonedx-go@"+dep.Version {
		t.Errorf("module component %+v", c)
	}
	if n := len(*bom.Components); n != len(bi.Deps)+1 || n < 2 {
		t.Errorf("%d components for %d modules and the standard library", n, len(bi.Deps))
	}

	if _, err := sign.BinarySBOM(sign.Binary{Path: "sbom_test.go"}, o); err == nil || !strings.Contains(err.Error(), "no Go build information") {
		t.Errorf("a file that is no Go binary: %v", err)
	}
}

func TestImageSBOM(t *testing.T) {
	exe := goBinary(t)
	digest := "sha256:" + strings.Repeat("ab", 32)
	baseDigest := "sha256:" + strings.Repeat("cd", 32)
	data, err := sign.ImageSBOM("ghcr.io/acme/manager", digest, "gcr.io/distroless/static:nonroot", baseDigest,
		[]sign.Binary{{Path: exe, Platform: "linux/amd64"}}, sign.SBOMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bom := decodeBOM(t, data)
	if m := bom.Metadata.Component; m.Type != cdx.ComponentTypeContainer || m.Version != digest ||
		m.PackageURL != "pkg:oci/manager@sha256%3A"+strings.Repeat("ab", 32)+"?repository_url=ghcr.io%2Facme%2Fmanager" {
		t.Errorf("image component %+v", m)
	}
	var base, bin *cdx.Component
	for _, c := range *bom.Components {
		switch c.Type {
		case cdx.ComponentTypeContainer:
			base = &c
		case cdx.ComponentTypeApplication:
			bin = &c
		}
	}
	if base == nil || base.Name != "gcr.io/distroless/static:nonroot" || (*base.Hashes)[0].Value != strings.Repeat("cd", 32) {
		t.Errorf("base component %+v", base)
	}
	if bin == nil || !slices.ContainsFunc(*bin.Properties, func(p cdx.Property) bool { return p.Value == "linux/amd64" }) {
		t.Errorf("binary component %+v", bin)
	}
	deps := (*bom.Dependencies)[slices.IndexFunc(*bom.Dependencies, func(d cdx.Dependency) bool { return d.Ref == bom.Metadata.Component.BOMRef })]
	if len(*deps.Dependencies) != 2 {
		t.Errorf("the image depends on %v", *deps.Dependencies)
	}
}
