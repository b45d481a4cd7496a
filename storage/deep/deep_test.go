package deep

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLocalPutGetDeleteList(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	st, err := New(Config{Type: "local", StorageDirectory: root})
	if err != nil {
		t.Fatal(err)
	}
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
		if spec.Type != "local" || spec.Path != filepath.Join(root, filepath.FromSlash(k), "index.seg") {
			t.Fatalf("load spec %+v", spec)
		}
		specs[k] = spec
	}
	js, _ := json.Marshal(specs[keys[0]])
	if want := `{"type":"local","path":"` + filepath.Join(root, "wiki/2024-01-01T00:00:00.000Z_2024-01-02T00:00:00.000Z/v1/0/index.seg") + `"}`; string(js) != want {
		t.Fatalf("load spec JSON %s, want %s", js, want)
	}
	var back LoadSpec
	if err := json.Unmarshal(js, &back); err != nil || back != specs[keys[0]] {
		t.Fatalf("load spec JSON round trip: %+v %v", back, err)
	}

	got, err := st.List(ctx, "wiki/")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, keys[:3]) {
		t.Fatalf("List(wiki/) = %v", got)
	}
	if got, _ := st.List(ctx, "wiki/2024-01-01"); !slices.Equal(got, keys[:2]) {
		t.Fatalf("List(wiki/2024-01-01) = %v", got)
	}
	if got, _ := st.List(ctx, ""); len(got) != 4 {
		t.Fatalf("List() = %v", got)
	}
	if got, err := st.List(ctx, "nothing/here"); err != nil || len(got) != 0 {
		t.Fatalf("List(missing) = %v, %v", got, err)
	}

	dst := filepath.Join(t.TempDir(), "cache", "seg")
	if err := st.Get(ctx, specs[keys[2]], dst); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); !bytes.Equal(b, bytes.Repeat([]byte{2}, 1002)) {
		t.Fatal("Get returned different bytes")
	}

	if err := st.Delete(ctx, specs[keys[2]]); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, specs[keys[2]]); err != nil {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "wiki", "2024-01-02T00:00:00.000Z_2024-01-03T00:00:00.000Z")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("empty key directories left behind")
	}
	if got, _ := st.List(ctx, "wiki/"); !slices.Equal(got, keys[:2]) {
		t.Fatalf("after delete: %v", got)
	}
	if err := st.Get(ctx, specs[keys[2]], dst+"2"); err == nil {
		t.Fatal("Get of a deleted segment succeeded")
	}
	// No temporary files are left in the storage tree.
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && info.Name() != "index.seg" {
			t.Errorf("stray file %s", p)
		}
		return nil
	})
}

func TestLocalRejectsEscapes(t *testing.T) {
	ctx := context.Background()
	st, _ := NewLocal(t.TempDir())
	src := writeFile(t, t.TempDir(), "seg", []byte("x"))
	for _, k := range []string{"", "/abs", "a/../b", "../x", "a//b", "a/./b", "a\\b"} {
		if _, err := st.Put(ctx, k, src); !errors.Is(err, ErrBadKey) {
			t.Errorf("key %q: %v", k, err)
		}
	}
	outside := writeFile(t, t.TempDir(), "secret", []byte("s"))
	for _, spec := range []LoadSpec{
		{Type: "local", Path: outside},
		{Type: "local", Path: filepath.Join(st.Root(), "..", "x")},
		{Type: "local", Path: st.Root()},
		{Type: "s3_zip", Bucket: "b", Key: "k"},
	} {
		if err := st.Get(ctx, spec, filepath.Join(t.TempDir(), "out")); err == nil {
			t.Errorf("Get(%+v) succeeded", spec)
		}
		if err := st.Delete(ctx, spec); err == nil {
			t.Errorf("Delete(%+v) succeeded", spec)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Fatal("file outside the root was touched")
	}
	if _, err := New(Config{Type: "local"}); err == nil {
		t.Fatal("local storage without a directory accepted")
	}
	if _, err := New(Config{Type: "hdfs"}); err == nil {
		t.Fatal("unknown type accepted")
	}
}

func TestNewS3(t *testing.T) {
	cfg := Config{Type: "s3", StorageDirectory: "/var/segs", Bucket: "segs", BaseKey: "/druid/prod/",
		S3Endpoint: "http://127.0.0.1:9000", S3AccessKey: "AK", S3SecretKey: "SK"}
	st, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s3 := st.(*S3)
	if s3.baseKey != "druid/prod" || s3.bucket != "segs" {
		t.Fatalf("s3 %+v", s3)
	}
	if u := s3.client.EndpointURL(); u.Host != "127.0.0.1:9000" || u.Scheme != "http" {
		t.Fatalf("endpoint %v", u)
	}
}

func TestS3KeyLayout(t *testing.T) {
	for _, tc := range []struct {
		base, key, object string
	}{
		{"", "wiki/i/v/0", "wiki/i/v/0/index.zip"},
		{"druid/segments", "wiki/i/v/3", "druid/segments/wiki/i/v/3/index.zip"},
	} {
		s := &S3{bucket: "b", baseKey: tc.base}
		if got := s.objectKey(tc.key); got != tc.object {
			t.Errorf("objectKey(%q) = %q, want %q", tc.key, got, tc.object)
		}
		if got, ok := s.segmentKey(tc.object); !ok || got != tc.key {
			t.Errorf("segmentKey(%q) = %q %v", tc.object, got, ok)
		}
	}
	s := &S3{bucket: "b", baseKey: "base"}
	for _, obj := range []string{"other/wiki/index.zip", "base/wiki/index.seg", "base/index.zip", "base/a/../index.zip"} {
		if k, ok := s.segmentKey(obj); ok {
			t.Errorf("segmentKey(%q) = %q, want no key", obj, k)
		}
	}
	js, _ := json.Marshal(LoadSpec{Type: "s3_zip", Bucket: "b", Key: s.objectKey("wiki/x/v/0")})
	if string(js) != `{"type":"s3_zip","bucket":"b","key":"base/wiki/x/v/0/index.zip"}` {
		t.Fatalf("s3 load spec JSON %s", js)
	}
	// Wrong load spec types are refused without contacting anything.
	st, _ := NewS3(Config{Bucket: "b", S3Endpoint: "https://s3.example.com"})
	ctx := context.Background()
	if err := st.Get(ctx, LoadSpec{Type: "local", Path: "/x"}, filepath.Join(t.TempDir(), "o")); err == nil {
		t.Fatal("s3 Get accepted a local load spec")
	}
	if err := st.Delete(ctx, LoadSpec{Type: "s3_zip"}); err == nil {
		t.Fatal("s3 Delete accepted an incomplete load spec")
	}
	if _, err := st.Put(ctx, "../x", "/nonexistent"); !errors.Is(err, ErrBadKey) {
		t.Fatalf("s3 Put with bad key: %v", err)
	}
	if _, err := NewS3(Config{}); err == nil {
		t.Fatal("s3 without bucket accepted")
	}
	for _, ep := range []string{"ftp://x", "http://", "http://h/path"} {
		if _, err := NewS3(Config{Bucket: "b", S3Endpoint: ep}); err == nil {
			t.Errorf("endpoint %q accepted", ep)
		}
	}
}

func TestZipRoundTrip(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("segment bytes "), 10000)
	seg := writeFile(t, dir, "index.seg", data)
	var buf bytes.Buffer
	if err := zipSegment(&buf, seg); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil || len(zr.File) != 1 || zr.File[0].Name != "index.seg" || zr.File[0].Method != zip.Store {
		t.Fatalf("archive layout: %v", err)
	}
	zp := writeFile(t, dir, "index.zip", buf.Bytes())
	out := filepath.Join(dir, "out", "seg")
	if err := unzipSegment(zp, out); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); !bytes.Equal(b, data) {
		t.Fatal("unzipped bytes differ")
	}
	// A damaged archive is an error, and the destination is not replaced.
	bad := bytes.Clone(buf.Bytes())
	bad[200] ^= 0xff
	bp := writeFile(t, dir, "bad.zip", bad)
	out2 := filepath.Join(dir, "out2")
	if err := unzipSegment(bp, out2); err == nil {
		t.Fatal("damaged archive extracted")
	}
	if _, err := os.Stat(out2); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("partial output left behind")
	}
	empty := writeFile(t, dir, "empty.zip", func() []byte {
		var b bytes.Buffer
		zip.NewWriter(&b).Close()
		return b.Bytes()
	}())
	if err := unzipSegment(empty, out2); err == nil {
		t.Fatal("archive without index.seg accepted")
	}
}
