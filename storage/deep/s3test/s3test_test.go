package s3test

import (
	"bytes"
	"crypto/sha256"
	"hash"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"
)

// sha256Hasher is the hasher minio-go's streaming signer takes.
type sha256Hasher struct{ hash.Hash }

func (sha256Hasher) Close() {}

// put sends a PUT of body signed as minio-go signs over plain HTTP
// (aws-chunked, STREAMING-AWS4-HMAC-SHA256-PAYLOAD), with tamper applied to
// the encoded body before it goes.
func put(t *testing.T, s *Server, key, secret string, body []byte, tamper func([]byte)) (int, string) {
	t.Helper()
	req, err := http.NewRequest("PUT", s.URL+"/"+s.Bucket+"/"+key, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req = signer.StreamingSignV4(req, s.AccessKey, secret, "", "us-east-1", int64(len(body)), time.Now().UTC(), sha256Hasher{sha256.New()})
	encoded, err := io.ReadAll(req.Body)
	if err != nil {
		t.Fatal(err)
	}
	if tamper != nil {
		tamper(encoded)
	}
	req.Body = io.NopCloser(bytes.NewReader(encoded))
	req.ContentLength = int64(len(encoded))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The server stores a correctly signed streamed body decoded, and refuses a
// wrong secret, a changed chunk and an unsigned request without storing.
func TestSignatureChecks(t *testing.T) {
	s := Start(t)
	body := bytes.Repeat([]byte("0123456789"), 20000) // several 64 KiB chunks
	if code, resp := put(t, s, "good", s.SecretKey, body, nil); code != 200 {
		t.Fatalf("signed PUT: %d %s", code, resp)
	}
	if got := s.Objects(t); len(got) != 1 || got["good"] != int64(len(body)) {
		t.Fatalf("objects %v, want good of %d bytes", got, len(body))
	}
	if code, resp := put(t, s, "bad", "wrong", body, nil); code != 403 || !strings.Contains(resp, "SignatureDoesNotMatch") {
		t.Fatalf("wrong secret: %d %s", code, resp)
	}
	changeLastChunk := func(b []byte) {
		i := bytes.LastIndex(b, []byte("0123456789"))
		b[i] = 'x'
	}
	if code, resp := put(t, s, "bad", s.SecretKey, body, changeLastChunk); code != 403 || !strings.Contains(resp, "a chunk of the body") {
		t.Fatalf("changed chunk: %d %s", code, resp)
	}
	resp, err := http.Get(s.URL + "/" + s.Bucket + "/good")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("unsigned GET: %d", resp.StatusCode)
	}
	if got := s.Objects(t); len(got) != 1 {
		t.Fatalf("refused requests stored objects: %v", got)
	}
}
