package pipeline

import (
	"os"
	"testing"

	"github.com/capirepo/capirepo/builder/buildtest"
)

const devExampleDir = "../examples/infrastructure-example"

var testVars = map[string]string{"TEST_TOKEN": "t"}

// TestMain removes the minimal trees the tests wrote.
func TestMain(m *testing.M) {
	code := m.Run()
	buildtest.RemoveTrees()
	os.Exit(code)
}
