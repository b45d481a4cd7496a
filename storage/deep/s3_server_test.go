package deep

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"strata/storage/deep/s3test"
)

// s3Storage returns S3 deep storage on srv under baseKey.
func s3Storage(t *testing.T, srv *s3test.Server, baseKey string) *S3 {
	t.Helper()
	p := srv.Properties(baseKey)
	st, err := New(Config{Type: "s3", Bucket: p["svc.storage.bucket"], BaseKey: baseKey, S3Endpoint: p["svc.s3.endpoint"],
		S3AccessKey: p["svc.s3.accessKey"], S3SecretKey: p["svc.s3.secretKey"], S3Region: p["svc.s3.region"]})
	if err != nil {
		t.Fatal(err)
	}
	return st.(*S3)
}

// Put, List, Get and Delete against a real S3 server: the objects are zip
// archives at <baseKey>/<key>/index.zip, Get returns the bytes Put stored,
// and Delete removes the object (twice is not an error).
func TestS3AgainstServer(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	st := s3Storage(t, srv, "/druid/prod/")
	src := t.TempDir()
	keys := []string{
		SegmentKey("wiki", "2024-01-01T00:00:00.000Z", "2024-01-02T00:00:00.000Z", "v1", 0),
		SegmentKey("wiki", "2024-01-01T00:00:00.000Z", "2024-01-02T00:00:00.000Z", "v1", 1),
		SegmentKey("wiki", "2024-01-02T00:00:00.000Z", "2024-01-03T00:00:00.000Z", "v1", 0),
		SegmentKey("other", "2024-01-01T00:00:00.000Z", "2024-01-02T00:00:00.000Z", "v2", 0),
	}
	specs := map[string]LoadSpec{}
	for i, k := range keys {
		p := writeFile(t, src, "seg", bytes.Repeat([]byte{byte(i)}, 1000+i))
		spec, err := st.Put(ctx, k, p)
		if err != nil {
			t.Fatal(err)
		}
		if want := (LoadSpec{Type: "s3_zip", Bucket: s3test.Bucket, Key: "druid/prod/" + k + "/index.zip"}); spec != want {
			t.Fatalf("load spec %+v, want %+v", spec, want)
		}
		specs[k] = spec
	}
	objects := srv.Objects(t)
	var want []string
	for _, k := range keys {
		want = append(want, "druid/prod/"+k+"/index.zip")
	}
	slices.Sort(want)
	if got := slices.Sorted(maps.Keys(objects)); !slices.Equal(got, want) {
		t.Fatalf("objects in the bucket %v, want %v", got, want)
	}

	if got, err := st.List(ctx, "wiki/"); err != nil || !slices.Equal(got, keys[:3]) {
		t.Fatalf("List(wiki/) = %v, %v", got, err)
	}
	if got, err := st.List(ctx, "wiki/2024-01-01"); err != nil || !slices.Equal(got, keys[:2]) {
		t.Fatalf("List(wiki/2024-01-01) = %v, %v", got, err)
	}
	if got, err := st.List(ctx, ""); err != nil || len(got) != 4 {
		t.Fatalf("List() = %v, %v", got, err)
	}
	if got, err := st.List(ctx, "nothing/"); err != nil || len(got) != 0 {
		t.Fatalf("List(nothing/) = %v, %v", got, err)
	}
	// Another storage on the same bucket with another base key sees none of them.
	if got, err := s3Storage(t, srv, "druid/test").List(ctx, ""); err != nil || len(got) != 0 {
		t.Fatalf("List under another base key = %v, %v", got, err)
	}

	cache := filepath.Join(t.TempDir(), "cache")
	dst := filepath.Join(cache, "seg")
	if err := st.Get(ctx, specs[keys[2]], dst); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); !bytes.Equal(b, bytes.Repeat([]byte{2}, 1002)) {
		t.Fatal("Get returned different bytes")
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 1 {
		t.Fatalf("Get left files behind: %v", ents)
	}

	if err := st.Delete(ctx, specs[keys[2]]); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, specs[keys[2]]); err != nil {
		t.Fatalf("second delete: %v", err)
	}
	if _, ok := srv.Objects(t)[specs[keys[2]].Key]; ok {
		t.Fatal("the deleted object is still in the bucket")
	}
	if got, _ := st.List(ctx, "wiki/"); !slices.Equal(got, keys[:2]) {
		t.Fatalf("after delete: %v", got)
	}
	if err := st.Get(ctx, specs[keys[2]], dst+"2"); err == nil {
		t.Fatal("Get of a deleted segment succeeded")
	}
	if _, err := os.Stat(dst + "2"); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a failed Get left its destination")
	}
	// A load spec naming an object outside the base key is refused, and the
	// object stays.
	if err := s3Storage(t, srv, "druid/test").Delete(ctx, specs[keys[0]]); err == nil {
		t.Fatal("Delete outside the base key succeeded")
	}
	if _, ok := srv.Objects(t)[specs[keys[0]].Key]; !ok {
		t.Fatal("an object outside the base key was deleted")
	}
	// Small segments go up in one PUT.
	for _, r := range srv.Requests() {
		if slices.Contains(r.Query, "uploads") || slices.Contains(r.Query, "partNumber") {
			t.Fatalf("a small segment went up as a multipart upload: %+v", r)
		}
	}
}

// List reads every page of a listing (the server returns 1000 keys a page)
// and keeps only segment archives under the base key.
func TestS3ListPages(t *testing.T) {
	srv := s3test.Start(t)
	st := s3Storage(t, srv, "base")
	var want []string
	for i := range 1500 {
		key := SegmentKey("wiki", "2024-01-01T00:00:00.000Z", "2024-01-02T00:00:00.000Z", "v1", i)
		srv.Put(t, "base/"+key+"/index.zip", []byte("zip"))
		want = append(want, key)
	}
	slices.Sort(want)
	// Objects that are not segment archives of this storage.
	for _, stray := range []string{"base/wiki/readme.txt", "base/index.zip", "other/wiki/x/v1/0/index.zip", "base/wiki/x/v1/0/index.seg"} {
		srv.Put(t, stray, []byte("x"))
	}
	got, err := st.List(context.Background(), "wiki/")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("List found %d keys, want %d", len(got), len(want))
	}
	var pages int
	for _, r := range srv.Requests() {
		if r.Method == "GET" && slices.Contains(r.Query, "list-type") {
			pages++
		}
	}
	if pages < 2 {
		t.Fatalf("%d listing requests for 1504 objects", pages)
	}
}

// A segment larger than the client's part size (16 MiB) goes up as a
// multipart upload, and comes back whole.
func TestS3MultipartUpload(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	st := s3Storage(t, srv, "")
	data := make([]byte, 33<<20) // three parts: 16 + 16 + 1 MiB (plus the zip's framing)
	rand.Read(data)
	p := writeFile(t, t.TempDir(), "seg", data)
	key := SegmentKey("big", "2024-01-01T00:00:00.000Z", "2024-01-02T00:00:00.000Z", "v1", 0)
	spec, err := st.Put(ctx, key, p)
	if err != nil {
		t.Fatal(err)
	}
	var initiated, parts, completed int
	for _, r := range srv.Requests() {
		switch {
		case r.Method == "POST" && slices.Contains(r.Query, "uploads"):
			initiated++
		case r.Method == "PUT" && slices.Contains(r.Query, "partNumber") && slices.Contains(r.Query, "uploadId"):
			parts++
		case r.Method == "POST" && slices.Contains(r.Query, "uploadId"):
			completed++
		case r.Method == "PUT":
			t.Fatalf("a single PUT for a %d-byte segment: %+v", len(data), r)
		}
		if r.Status != 200 {
			t.Fatalf("request %+v failed", r)
		}
	}
	if initiated != 1 || parts != 3 || completed != 1 {
		t.Fatalf("multipart upload: %d initiated, %d parts, %d completed; want 1, 3, 1", initiated, parts, completed)
	}
	if size := srv.Objects(t)[spec.Key]; size < int64(len(data)) {
		t.Fatalf("object %s is %d bytes, the segment %d", spec.Key, size, len(data))
	}
	dst := filepath.Join(t.TempDir(), "seg")
	if err := st.Get(ctx, spec, dst); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); !bytes.Equal(b, data) {
		t.Fatal("the segment came back different")
	}
}

// Check finds a wrong secret, a wrong access key and a missing bucket, each
// with the server's reason, and passes with the right settings, empty bucket
// or not.
func TestS3Check(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	if err := s3Storage(t, srv, "base").Check(ctx); err != nil {
		t.Fatalf("Check on an empty bucket: %v", err)
	}
	srv.Put(t, "base/wiki/x/v1/0/index.zip", []byte("zip"))
	srv.Put(t, "base/wiki/x/v1/1/index.zip", []byte("zip"))
	if err := s3Storage(t, srv, "base").Check(ctx); err != nil {
		t.Fatalf("Check: %v", err)
	}
	for _, tc := range []struct {
		name, bucket, access, secret, want string
	}{
		{"wrong secret", s3test.Bucket, s3test.AccessKey, "wrong", "signature we calculated does not match"},
		{"wrong access key", s3test.Bucket, "wrong", s3test.SecretKey, "Access Key Id you provided does not exist"},
		{"no such bucket", "missing", s3test.AccessKey, s3test.SecretKey, "bucket does not exist"},
	} {
		st, err := NewS3(Config{Bucket: tc.bucket, BaseKey: "base", S3Endpoint: srv.URL, S3AccessKey: tc.access, S3SecretKey: tc.secret, S3Region: "us-east-1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Check(ctx); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "s3://"+tc.bucket+"/base/") {
			t.Errorf("%s: Check = %v, want an error naming s3://%s/base/ and saying %q", tc.name, err, tc.bucket, tc.want)
		}
	}
}

// Wrong credentials fail every operation with the server's own words, and
// store or delete nothing.
func TestS3WrongCredentials(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	good := s3Storage(t, srv, "")
	p := writeFile(t, t.TempDir(), "seg", []byte("segment bytes"))
	key := SegmentKey("wiki", "2024-01-01T00:00:00.000Z", "2024-01-02T00:00:00.000Z", "v1", 0)
	spec, err := good.Put(ctx, key, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, access, secret, want string
	}{
		{"wrong access key", "someone-else", s3test.SecretKey, "The AWS Access Key Id you provided does not exist in our records"},
		{"wrong secret key", s3test.AccessKey, "not-the-secret", "The request signature we calculated does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad, err := NewS3(Config{Bucket: s3test.Bucket, S3Endpoint: srv.URL, S3AccessKey: tc.access, S3SecretKey: tc.secret, S3Region: "us-east-1"})
			if err != nil {
				t.Fatal(err)
			}
			check := func(op string, err error) {
				t.Helper()
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "s3://"+s3test.Bucket+"/") {
					t.Errorf("%s: %v; want an error naming the object and saying %q", op, err, tc.want)
				}
			}
			other := SegmentKey("wiki", "2024-01-02T00:00:00.000Z", "2024-01-03T00:00:00.000Z", "v1", 0)
			_, err = bad.Put(ctx, other, p)
			check("Put", err)
			check("Get", bad.Get(ctx, spec, filepath.Join(t.TempDir(), "seg")))
			check("Delete", bad.Delete(ctx, spec))
			_, err = bad.List(ctx, "")
			check("List", err)
			if got := slices.Sorted(maps.Keys(srv.Objects(t))); !slices.Equal(got, []string{spec.Key}) {
				t.Fatalf("objects after refused requests: %v", got)
			}
		})
	}
}

// Put stages its archive next to the segment file, not in os.TempDir: a
// process whose temporary directory cannot be written (a container with a
// read-only root file system and no /tmp volume) still publishes, and no
// staging file is left beside the segment.
func TestS3PutWithoutTempDir(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	srv := s3test.Start(t)
	st := s3Storage(t, srv, "")
	dir := t.TempDir()
	p := writeFile(t, dir, "index.seg", []byte("segment bytes"))
	spec, err := st.Put(context.Background(), SegmentKey("wiki", "2024-01-01T00:00:00.000Z", "2024-01-02T00:00:00.000Z", "v1", 0), p)
	if err != nil {
		t.Fatalf("Put with an unwritable temporary directory: %v", err)
	}
	if _, ok := srv.Objects(t)[spec.Key]; !ok {
		t.Fatalf("no object %s", spec.Key)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("files beside the segment after Put: %v", ents)
	}
}
