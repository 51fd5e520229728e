package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
)

// contentEncoding is a compression a client may accept for a response.
type contentEncoding string

// The encodings the client's files are served in, best first.
const (
	encodingBrotli   contentEncoding = "br"
	encodingGzip     contentEncoding = "gzip"
	encodingIdentity contentEncoding = ""
)

// brotliLevel is the brotli quality for the client's files: they are
// compressed once per process and then served many times, so the slow,
// dense end of the scale pays.
const brotliLevel = 11

// encodedFile is one static file in each encoding that makes it smaller.
type encodedFile struct {
	etag   string // of the plain content
	bodies map[contentEncoding][]byte
	err    error
}

// encodedFiles compresses each static file once, when it is first asked
// for, and keeps every form (one per process: see embeddedClient).
type encodedFiles struct {
	mu    sync.Mutex
	files map[string]func() *encodedFile
}

// get returns name's encodings, computing them from load the first time.
func (e *encodedFiles) get(name string, load func() ([]byte, error)) *encodedFile {
	e.mu.Lock()
	f, ok := e.files[name]
	if !ok {
		f = sync.OnceValue(func() *encodedFile { return compressFile(load) })
		e.files[name] = f
	}
	e.mu.Unlock()
	return f()
}

// compressFile loads a file and compresses it in every encoding that makes it
// smaller.
func compressFile(load func() ([]byte, error)) *encodedFile {
	plain, err := load()
	if err != nil {
		return &encodedFile{err: err}
	}
	sum := sha256.Sum256(plain)
	f := &encodedFile{etag: hex.EncodeToString(sum[:8]), bodies: map[contentEncoding][]byte{encodingIdentity: plain}}
	var br bytes.Buffer
	bw := brotli.NewWriterLevel(&br, brotliLevel)
	bw.Write(plain)
	bw.Close()
	var gz bytes.Buffer
	gw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	gw.Write(plain)
	gw.Close()
	for enc, body := range map[contentEncoding][]byte{encodingBrotli: br.Bytes(), encodingGzip: gz.Bytes()} {
		if len(body) < len(plain) {
			f.bodies[enc] = body
		}
	}
	return f
}

// serve answers r with the named file in the best encoding the client
// accepts, with an ETag per encoding so that conditional requests work.
func (e *encodedFiles) serve(w http.ResponseWriter, r *http.Request, name string, load func() ([]byte, error)) {
	f := e.get(name, load)
	if f.err != nil {
		http.Error(w, "static file unavailable", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Add("Vary", "Accept-Encoding")
	enc := f.choose(r.Header.Get("Accept-Encoding"))
	etag := f.etag
	if enc != encodingIdentity {
		h.Set("Content-Encoding", string(enc))
		etag += "-" + string(enc)
	}
	h.Set("ETag", strconv.Quote(etag))
	http.ServeContent(w, r, name, modTime, bytes.NewReader(f.bodies[enc]))
}

// choose is the best of f's encodings that the Accept-Encoding header
// allows (a coding with q=0 is refused; "*" stands for any other).
func (f *encodedFile) choose(accept string) contentEncoding {
	for _, enc := range []contentEncoding{encodingBrotli, encodingGzip} {
		if _, ok := f.bodies[enc]; ok && accepts(accept, enc) {
			return enc
		}
	}
	return encodingIdentity
}

// accepts reports whether an Accept-Encoding header allows enc.
func accepts(header string, enc contentEncoding) bool {
	star := false
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		switch {
		case strings.EqualFold(coding, string(enc)):
			return q > 0
		case coding == "*":
			star = q > 0
		}
	}
	return star
}
