package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// lockedBuffer is a bytes.Buffer the drawing goroutine and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestUploadBars_NoneWhereNoTerminalOrNoText: neither a buffer, a file,
// /dev/null (a character device, no terminal) nor --output json get bars.
func TestUploadBars_NoneWhereNoTerminalOrNoText(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	for _, w := range []io.Writer{&bytes.Buffer{}, f, devNull} {
		for _, output := range []string{"text", "json"} {
			if b := NewUploadBars(w, output == "text"); b != nil {
				b.Close()
				t.Errorf("bars on %T with --output %s", w, output)
			}
		}
	}
}

// TestUploadBars_DrawABarPerUploadWithTheLinesAboveIt draws on a buffer as
// on a terminal: the test that bars are not drawn elsewhere could not fail
// if bars were never drawn at all.
func TestUploadBars_DrawABarPerUploadWithTheLinesAboveIt(t *testing.T) {
	var out lockedBuffer
	u := StartUploadBars(&out)
	errOut := u.Writer(&out)
	data := bytes.Repeat([]byte("x"), 64<<10)
	r := u.Hook().Upload("infrastructure-components.yaml", int64(len(data)), bytes.NewReader(data))
	if _, err := io.CopyN(io.Discard, r, int64(len(data)/2)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(errOut, "github acme/example: uploaded metadata.yaml\n"); err != nil {
		t.Fatal(err)
	}
	// Three refreshes: the third is taken only once the first drawing is done.
	for range 3 {
		u.refresh <- nil
	}
	drawn := out.String()
	for _, want := range []string{"infrastructure-components.yaml", "32.0 KiB / 64.0 KiB", "50 %", "uploaded metadata.yaml\n"} {
		if !strings.Contains(drawn, want) {
			t.Errorf("the drawing lacks %q:\n%q", want, drawn)
		}
	}
	if strings.Index(drawn, "uploaded metadata.yaml") > strings.Index(drawn, "KiB") {
		t.Errorf("the line is not above the bar:\n%q", drawn)
	}
	// A retry of the same upload takes the place of the failed attempt's bar.
	first := u.bars["infrastructure-components.yaml"]
	retry := u.Upload("infrastructure-components.yaml", int64(len(data)), bytes.NewReader(data))
	if !first.Aborted() || u.bars["infrastructure-components.yaml"] == first {
		t.Error("the first attempt's bar stays beside the retry's")
	}
	if n, err := io.Copy(io.Discard, retry); err != nil || n != int64(len(data)) {
		t.Errorf("the retry read %d bytes, %v; want %d", n, err, len(data))
	}
	got, err := io.ReadAll(r)
	if err != nil || len(got) != len(data)/2 {
		t.Errorf("the rest of the upload: %d bytes, %v; want %d", len(got), err, len(data)/2)
	}
	u.Close()
	u.Close() // twice is fine
	// Once closed, lines go to stderr at once and uploads get no bar.
	if _, err := io.WriteString(errOut, "after\n"); err != nil || !strings.HasSuffix(out.String(), "after\n") {
		t.Errorf("a line after Close: %v, output ends %q", err, out.String())
	}
	if r := u.Upload("late", 10, strings.NewReader("0123456789")); r == nil {
		t.Error("Upload after Close returned no reader")
	}
}
