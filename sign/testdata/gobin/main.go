// Command gobin is a Go binary for the SBOM tests: it links one module
// besides the standard library.
package main

import (
	"fmt"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

func main() { fmt.Println(cdx.SpecVersion1_6) }
