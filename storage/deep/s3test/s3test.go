// Package s3test runs an S3-compatible server for tests: gofakes3 with its
// in-memory backend, served over HTTP on a loopback port, so that deep
// storage's S3 client speaks the real protocol (bucket location, PUT,
// multipart uploads, GET, DELETE, ListObjectsV2) to a real server.
//
// gofakes3 does not check request signatures, so the server checks them
// itself before gofakes3 sees a request: every request must carry an AWS
// Signature Version 4 Authorization header whose access key is the server's
// and whose signature, recomputed here with the server's secret key from the
// headers it names, matches. A request that fails gets S3's 403 error
// (InvalidAccessKeyId, SignatureDoesNotMatch or AccessDenied). A body sent
// aws-chunked (STREAMING-AWS4-HMAC-SHA256-PAYLOAD, as minio-go sends over
// plain HTTP) is decoded here, each chunk's signature checked against the
// chain that starts at the header's: gofakes3 v1.2.0 decodes such bodies for
// PutObject but stores an UploadPart's body with its chunk framing, which
// corrupts every multipart upload.
//
// The server also records every request it served (method, path, and the
// names of its query parameters), which is how tests see that an upload
// went as a multipart upload.
package s3test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Default credentials and bucket of a Server.
const (
	AccessKey = "strata-test-access"
	SecretKey = "strata-test-secret"
	Bucket    = "segments"
)

// Server is a running S3-compatible server with one bucket.
type Server struct {
	URL       string // http://127.0.0.1:port
	Bucket    string
	AccessKey string
	SecretKey string

	backend *s3mem.Backend
	http    *httptest.Server

	mu       sync.Mutex
	requests []Request
	denied   map[string]bool // methods refused with AccessDenied
}

// Request is one request the server answered.
type Request struct {
	Method string
	Path   string   // escaped path: /bucket/key
	Query  []string // names of the query parameters, sorted
	Status int
}

// Start starts a server with the bucket Bucket, stopped when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{Bucket: Bucket, AccessKey: AccessKey, SecretKey: SecretKey, backend: s3mem.New()}
	if err := s.backend.CreateBucket(s.Bucket); err != nil {
		t.Fatal(err)
	}
	fake := gofakes3.New(s.backend, gofakes3.WithoutVersioning())
	s.http = httptest.NewServer(s.authenticate(fake.Server()))
	s.URL = s.http.URL
	t.Cleanup(s.http.Close)
	return s
}

// Properties returns the svc.* settings that point S3 deep storage at the
// server, under baseKey.
func (s *Server) Properties(baseKey string) map[string]string {
	return map[string]string{
		"svc.storage.type":    "s3",
		"svc.storage.bucket":  s.Bucket,
		"svc.storage.baseKey": baseKey,
		"svc.s3.endpoint":     s.URL,
		"svc.s3.accessKey":    s.AccessKey,
		"svc.s3.secretKey":    s.SecretKey,
		"svc.s3.region":       "us-east-1",
	}
}

// Objects returns the keys of the objects in the bucket, sorted, with their
// sizes.
func (s *Server) Objects(t testing.TB) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	page := gofakes3.ListBucketPage{}
	for {
		list, err := s.backend.ListBucket(s.Bucket, &gofakes3.Prefix{}, page)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range list.Contents {
			out[c.Key] = c.Size
		}
		if !list.IsTruncated {
			return out
		}
		page = gofakes3.ListBucketPage{Marker: list.NextMarker, HasMarker: true}
	}
}

// Put stores an object directly in the bucket, as another writer would.
func (s *Server) Put(t testing.TB, key string, data []byte) {
	t.Helper()
	if _, err := s.backend.PutObject(s.Bucket, key, map[string]string{}, bytes.NewReader(data), int64(len(data)), nil); err != nil {
		t.Fatal(err)
	}
}

// Deny makes the server refuse every request of method with 403
// AccessDenied, as a bucket policy that does not grant it would (Deny("DELETE"):
// no s3:DeleteObject); Deny(method, false) lifts it.
func (s *Server) Deny(method string, deny bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.denied == nil {
		s.denied = map[string]bool{}
	}
	s.denied[method] = deny
}

// Requests returns the requests served so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// authenticate checks each request's signature, records it and passes it to
// next.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		code, msg, sig := s.checkSignature(r)
		if code == "" {
			code, msg = s.decodeChunked(r, sig)
		}
		s.mu.Lock()
		if code == "" && s.denied[r.Method] {
			code, msg = "AccessDenied", "Access Denied"
		}
		s.mu.Unlock()
		if code != "" {
			rec.Header().Set("Content-Type", "application/xml")
			rec.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(rec, `<?xml version="1.0" encoding="UTF-8"?>`+"\n<Error><Code>%s</Code><Message>%s</Message><Resource>%s</Resource></Error>",
				code, msg, r.URL.EscapedPath())
		} else {
			next.ServeHTTP(rec, r)
		}
		if rec.status == 0 {
			rec.status = http.StatusOK // nothing written: net/http answers 200
		}
		var query []string
		for k := range r.URL.Query() {
			query = append(query, k)
		}
		slices.Sort(query)
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.EscapedPath(), Query: query, Status: rec.status})
		s.mu.Unlock()
	})
}

// checkSignature verifies r's AWS Signature Version 4 Authorization header
// against the server's credentials. It returns an S3 error code and message,
// or "" and the signing context when the signature is good.
func (s *Server) checkSignature(r *http.Request) (code, msg string, sig *signing) {
	const algorithm = "AWS4-HMAC-SHA256"
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, algorithm+" ")
	if !ok {
		return "AccessDenied", "Access Denied: the request is not signed with " + algorithm, nil
	}
	fields := map[string]string{}
	for f := range strings.SplitSeq(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		fields[k] = v
	}
	scope := strings.Split(fields["Credential"], "/") // access key, date, region, service, "aws4_request"
	if len(scope) != 5 || scope[4] != "aws4_request" {
		return "AuthorizationHeaderMalformed", "The authorization header is malformed: bad Credential", nil
	}
	if scope[0] != s.AccessKey {
		return "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.", nil
	}
	amzDate := r.Header.Get("X-Amz-Date")
	if !strings.HasPrefix(amzDate, scope[1]) {
		return "AuthorizationHeaderMalformed", "The authorization header is malformed: the Credential date is not the request's X-Amz-Date", nil
	}
	signed := strings.Split(fields["SignedHeaders"], ";")
	var canonHeaders strings.Builder
	for _, h := range signed {
		var v string
		switch h {
		case "host":
			v = r.Host
		case "content-length":
			v = strconv.FormatInt(r.ContentLength, 10)
		default:
			var vals []string
			for _, x := range r.Header.Values(h) {
				vals = append(vals, strings.Join(strings.Fields(x), " "))
			}
			v = strings.Join(vals, ",")
		}
		canonHeaders.WriteString(h + ":" + v + "\n")
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		payload = "UNSIGNED-PAYLOAD"
	}
	canonical := strings.Join([]string{
		r.Method,
		encodePath(r.URL.Path),
		strings.ReplaceAll(r.URL.Query().Encode(), "+", "%20"),
		canonHeaders.String(),
		fields["SignedHeaders"],
		payload,
	}, "\n")
	sum := sha256.Sum256([]byte(canonical))
	toSign := algorithm + "\n" + amzDate + "\n" + strings.Join(scope[1:], "/") + "\n" + hex.EncodeToString(sum[:])
	key := []byte("AWS4" + s.SecretKey)
	for _, part := range scope[1:] {
		key = hmacSHA256(key, part)
	}
	if want := hex.EncodeToString(hmacSHA256(key, toSign)); !hmac.Equal([]byte(want), []byte(fields["Signature"])) {
		return "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided. Check your key and signing method.", nil
	}
	return "", "", &signing{key: key, date: amzDate, scope: strings.Join(scope[1:], "/"), seed: fields["Signature"]}
}

// signing is what a request's chunk signatures are checked with.
type signing struct {
	key         []byte
	date, scope string
	seed        string // the Authorization header's signature
}

// decodeChunked replaces an aws-chunked body by its payload, checking each
// chunk's signature, and makes the request look as if the payload had been
// sent plainly. It returns an S3 error code and message, or "".
func (s *Server) decodeChunked(r *http.Request, sig *signing) (code, msg string) {
	mode := r.Header.Get("X-Amz-Content-Sha256")
	if !strings.HasPrefix(mode, "STREAMING-") {
		return "", ""
	}
	if mode != "STREAMING-AWS4-HMAC-SHA256-PAYLOAD" {
		return "NotImplemented", "s3test does not decode " + mode + " bodies"
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return "IncompleteBody", err.Error()
	}
	var payload []byte
	prev := sig.seed
	for {
		line, rest, ok := bytes.Cut(body, []byte("\r\n"))
		sizeHex, chunkSig, ok2 := strings.Cut(string(line), ";chunk-signature=")
		size, err := strconv.ParseInt(sizeHex, 16, 64)
		if !ok || !ok2 || err != nil || size < 0 || int64(len(rest)) < size+2 || string(rest[size:size+2]) != "\r\n" {
			return "IncompleteBody", "malformed aws-chunked body"
		}
		data := rest[:size]
		sum := sha256.Sum256(data)
		toSign := strings.Join([]string{"AWS4-HMAC-SHA256-PAYLOAD", sig.date, sig.scope, prev, emptySHA256, hex.EncodeToString(sum[:])}, "\n")
		want := hex.EncodeToString(hmacSHA256(sig.key, toSign))
		if !hmac.Equal([]byte(want), []byte(chunkSig)) {
			return "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided (a chunk of the body)."
		}
		prev = chunkSig
		payload = append(payload, data...)
		body = rest[size+2:]
		if size == 0 {
			break
		}
	}
	if decoded := r.Header.Get("X-Amz-Decoded-Content-Length"); decoded != strconv.Itoa(len(payload)) {
		return "IncompleteBody", "the body's chunks hold " + strconv.Itoa(len(payload)) + " bytes, X-Amz-Decoded-Content-Length says " + decoded
	}
	sum := sha256.Sum256(payload)
	r.Body = io.NopCloser(bytes.NewReader(payload))
	r.ContentLength = int64(len(payload))
	r.Header.Set("Content-Length", strconv.Itoa(len(payload)))
	r.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	r.Header.Del("X-Amz-Decoded-Content-Length")
	var enc []string
	for _, e := range strings.Split(r.Header.Get("Content-Encoding"), ",") {
		if e = strings.TrimSpace(e); e != "" && e != "aws-chunked" {
			enc = append(enc, e)
		}
	}
	if len(enc) == 0 {
		r.Header.Del("Content-Encoding")
	} else {
		r.Header.Set("Content-Encoding", strings.Join(enc, ","))
	}
	return "", ""
}

// emptySHA256 is the SHA-256 of nothing, in hex.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// encodePath is SigV4's canonical URI for S3: every byte but the unreserved
// characters and "/" percent-encoded, once.
func encodePath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '/' || c == '-' || c == '_' || c == '.' || c == '~' ||
			'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			b.WriteByte(c)
		} else {
			b.WriteString("%" + strings.ToUpper(hex.EncodeToString([]byte{c})))
		}
	}
	return b.String()
}
