package publish

import (
	"bytes"
	"errors"
	"io"
	"net/http"
)

// UploadProgress follows the bytes of the uploads a publisher sends, e.g.
// to draw a progress bar. A publisher with none set sends its bodies as
// they are.
type UploadProgress interface {
	// Upload is called when an attempt to upload the file name (size
	// bytes) starts, with the body the request reads; it returns the
	// reader the request reads instead (r itself, or a reader that counts
	// what passes through it). A retried upload starts again: Upload is
	// called once per attempt, and each attempt's reader is read from the
	// start.
	Upload(name string, size int64, r io.Reader) io.Reader
}

// uploadBody is the body of one upload read through an UploadProgress.
// It is an io.ReadSeeker with a Len, as the GitLab client wants (it
// seeks to the start before each of its attempts); every start makes a
// new reader through the hook, so the hook sees each attempt's bytes once.
type uploadBody struct {
	hook UploadProgress
	name string
	data []byte
	r    io.Reader
	n    int // bytes read in this attempt
}

// UploadBody returns the body of an upload of data: a bytes.Reader
// when hook is nil, else one read through hook.
func UploadBody(hook UploadProgress, name string, data []byte) io.Reader {
	if hook == nil {
		return bytes.NewReader(data)
	}
	return &uploadBody{hook: hook, name: name, data: data}
}

func (b *uploadBody) Read(p []byte) (int, error) {
	if b.r == nil {
		b.r = b.hook.Upload(b.name, int64(len(b.data)), bytes.NewReader(b.data))
	}
	n, err := b.r.Read(p)
	b.n += n
	return n, err
}

// Seek starts the upload over; only a seek to the start is supported (the
// GitLab client's only use).
func (b *uploadBody) Seek(offset int64, whence int) (int64, error) {
	if offset != 0 || whence != io.SeekStart {
		return 0, errors.New("upload body: only a seek to the start is supported")
	}
	b.r, b.n = nil, 0
	return 0, nil
}

// Len is what is left to read in this attempt (the request's length).
func (b *uploadBody) Len() int { return len(b.data) - b.n }

// WatchUpload makes req send data through hook, also when the HTTP client
// sends the body again (GetBody, for a redirect that keeps the body); with
// hook nil req is left as it is.
func WatchUpload(req *http.Request, hook UploadProgress, name string, data []byte) {
	if hook == nil {
		return
	}
	req.Body = io.NopCloser(UploadBody(hook, name, data))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(UploadBody(hook, name, data)), nil }
}
