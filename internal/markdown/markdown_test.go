package markdown

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestWriters_RenderWhatTheyAreGiven: a table of cells holding every
// character that would leave a cell or become markup, and details around
// it, pass Check; the escaped text reads as given once GitHub unescapes it.
func TestWriters_RenderWhatTheyAreGiven(t *testing.T) {
	nasty := "a|b <c> *d* _e_ [f](g) `h` \\i\nj"
	var b bytes.Buffer
	b.WriteString("## Heading\n\n")
	err := Details(&b, "3 <findings>", false, func(w io.Writer) error {
		return Table(w, []string{"text", "code"}, [][]string{{Text(nasty), Code(nasty)}, {Text("x")}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(b.String()); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	for _, want := range []string{
		`a\|b \<c\> \*d\* \_e\_ \[f\](g) \` + "`h\\` \\\\i j",
		"`` a\\|b <c> *d* _e_ [f](g) `h` \\i j ``",
		"<summary>3 &lt;findings&gt;</summary>",
		"| x |  |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
}

// TestCheck_FindsWhatGitHubRendersOtherwise: each broken document is
// refused with its line; the fixed one passes.
func TestCheck_FindsWhatGitHubRendersOtherwise(t *testing.T) {
	good := "## A\n\ntext\n\n| a | b |\n|---|---|\n| 1 | 2 \\| 3 |\n\n<details>\n<summary>more</summary>\n\n- `<x>`\n\n</details>\n"
	if err := Check(good); err != nil {
		t.Fatalf("good document: %v", err)
	}
	for name, md := range map[string]string{
		"heading without space":        "##A\n",
		"heading after text":           "text\n## A\n",
		"table after text":             "text\n| a |\n|---|\n",
		"no delimiter row":             "| a | b |\n| 1 | 2 |\n",
		"row of another width":         "| a | b |\n|---|---|\n| 1 |\n",
		"unescaped pipe in a cell":     "| a | b |\n|---|---|\n| 1 | 2 | 3 |\n",
		"text right after the table":   "| a |\n|---|\n| 1 |\ntext\n",
		"details without summary":      "<details>\n\ntext\n\n</details>\n",
		"no blank after summary":       "<details>\n<summary>s</summary>\ntext\n\n</details>\n",
		"no blank before /details":     "<details>\n<summary>s</summary>\n\ntext\n</details>\n",
		"details not closed":           "<details>\n<summary>s</summary>\n\ntext\n",
		"closed without open":          "text\n\n</details>\n",
		"fence not closed":             "```\ncode\n",
		"raw html":                     "a <b> c\n",
		"raw < after an unclosed span": "a `b <c\n",
		"raw < after an escaped tick":  "a \\`b <c> d`\n",
	} {
		if err := Check(md); err == nil {
			t.Errorf("%s: Check passes %q", name, md)
		}
	}
}
