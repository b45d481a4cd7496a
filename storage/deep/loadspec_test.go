package deep

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// Load specs naming one file have one FileKey however they are spelled, and
// the ones Put writes are their own FileKey.
func TestFileKey(t *testing.T) {
	root := t.TempDir()
	st, _ := NewLocal(root)
	key := SegmentKey("wiki", "2024-01-01T00:00:00.000Z", "2024-01-02T00:00:00.000Z", "v1", 0)
	ls, err := st.Put(context.Background(), key, writeFile(t, t.TempDir(), "seg", []byte("x")))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(ls)
	canonical := string(b)
	if got := FileKey(canonical); got != canonical {
		t.Fatalf("FileKey(%s) = %s", canonical, got)
	}
	dir := filepath.Join(root, "wiki")
	for _, same := range []string{
		`{"path":"` + ls.Path + `","type":"local"}`,
		`{"type":"local","path":"` + strings.Replace(ls.Path, dir, dir+"/./", 1) + `"}`,
		`{"type":"local","path":"` + strings.Replace(ls.Path, dir, filepath.Join(root, "other", "..", "wiki"), 1) + `"}`,
		`{"type": "local", "path": "` + ls.Path + `", "extra": 1}`,
	} {
		if got := FileKey(same); got != canonical {
			t.Errorf("FileKey(%s) = %s, want %s", same, got, canonical)
		}
	}
	s3 := `{"type":"s3_zip","bucket":"b","key":"base/wiki/x/v/0/index.zip"}`
	if got := FileKey(`{"key":"base/wiki/x/v/0/index.zip","bucket":"b","type":"s3_zip"}`); got != s3 {
		t.Errorf("s3 FileKey %s", got)
	}
	if FileKey(s3) != s3 {
		t.Errorf("canonical s3 load spec is not its own FileKey")
	}
	for _, none := range []string{"", "null", `{"type":"tombstone"}`, `{"type":"hdfs","path":"/x"}`, `{"type":"local"}`, `{"type":"s3_zip","bucket":"b"}`, `{`} {
		if got := FileKey(none); got != "" {
			t.Errorf("FileKey(%s) = %q, want none", none, got)
		}
	}
	// Characters JSON escapes take the decoding path and still agree.
	odd := LoadSpec{Type: "local", Path: "/deep/a&b/<c>/index.seg"}
	ob, _ := json.Marshal(odd)
	if FileKey(`{"type":"local","path":"/deep/a&b/<c>/index.seg"}`) != string(ob) || FileKey(string(ob)) != string(ob) {
		t.Errorf("escaped spellings differ: %s", ob)
	}
}

func TestCheckLoadSpecLocal(t *testing.T) {
	root := t.TempDir()
	cfg := Config{Type: "local", StorageDirectory: root}
	key, err := CheckedSegmentKey("evil", "2024-01-01T00:00:00.000Z", "2024-01-02T00:00:00.000Z", "v1", 0)
	if err != nil {
		t.Fatal(err)
	}
	wiki := SegmentKey("wiki", "2024-01-01T00:00:00.000Z", "2024-01-02T00:00:00.000Z", "v1", 0)
	at := func(k string) LoadSpec {
		return LoadSpec{Type: "local", Path: filepath.Join(root, filepath.FromSlash(k), SegmentFile)}
	}
	for _, ok := range []LoadSpec{at(key), at(key + "/task_1")} {
		if err := cfg.CheckLoadSpec(ok, key); err != nil {
			t.Errorf("CheckLoadSpec(%+v): %v", ok, err)
		}
	}
	for _, bad := range []LoadSpec{
		at(wiki),             // another segment's file
		at(wiki + "/task_1"), // under another segment's key
		at(key + "/a/b"),     // deeper than one task element
		at("evil"),           // a parent of the key
		{Type: "local", Path: filepath.Join(root, filepath.FromSlash(key), "other.seg")},
		{Type: "local", Path: filepath.Join(root, "..", "x", filepath.FromSlash(key), SegmentFile)},
		{Type: "local", Path: filepath.Join(filepath.FromSlash(key), SegmentFile)}, // relative
		{Type: "local", Path: filepath.Join(root, filepath.FromSlash(key), "..", "..", "..", "..", "..", filepath.FromSlash(wiki), SegmentFile)},
		{Type: "s3_zip", Bucket: "b", Key: key + "/index.zip"},
		{Type: "tombstone"},
	} {
		if err := cfg.CheckLoadSpec(bad, key); err == nil {
			t.Errorf("CheckLoadSpec(%+v) accepted", bad)
		}
	}
	if err := (Config{Type: "local"}).CheckLoadSpec(at(key), key); err == nil {
		t.Error("local storage without a directory accepted a load spec")
	}
}

func TestCheckLoadSpecS3(t *testing.T) {
	cfg := Config{Type: "s3", Bucket: "segs", BaseKey: "/druid/prod/"}
	key := SegmentKey("evil", "2024-01-01T00:00:00.000Z", "2024-01-02T00:00:00.000Z", "v1", 0)
	for _, ok := range []string{"druid/prod/" + key + "/index.zip", "druid/prod/" + key + "/task_1/index.zip"} {
		if err := cfg.CheckLoadSpec(LoadSpec{Type: "s3_zip", Bucket: "segs", Key: ok}, key); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []LoadSpec{
		{Type: "s3_zip", Bucket: "other", Key: "druid/prod/" + key + "/index.zip"},
		{Type: "s3_zip", Bucket: "segs", Key: key + "/index.zip"},
		{Type: "s3_zip", Bucket: "segs", Key: "druid/prod/wiki/x/v1/0/index.zip"},
		{Type: "s3_zip", Bucket: "segs", Key: "druid/prod/" + key + "/../../../../wiki/x/v1/0/index.zip"},
		{Type: "local", Path: "/deep/" + key + "/index.seg"},
	} {
		if err := cfg.CheckLoadSpec(bad, key); err == nil {
			t.Errorf("CheckLoadSpec(%+v) accepted", bad)
		}
	}
}

// A dataSource or version that is not one path element cannot make a key;
// path.Join would otherwise clean this version into wiki's key.
func TestCheckedSegmentKey(t *testing.T) {
	iv := []string{"2024-01-01T00:00:00.000Z", "2024-01-02T00:00:00.000Z"}
	if k := SegmentKey("evil", iv[0], iv[1], "../../wiki/"+iv[0]+"_"+iv[1]+"/v1", 0); k != SegmentKey("wiki", iv[0], iv[1], "v1", 0) {
		t.Fatalf("premise: %s", k)
	}
	for _, bad := range [][2]string{{"evil", "../../wiki"}, {"..", "v1"}, {"wiki", ".."}, {"wiki", ""}, {"a\\b", "v"}, {"", "v"}} {
		if _, err := CheckedSegmentKey(bad[0], iv[0], iv[1], bad[1], 0); !errors.Is(err, ErrBadKey) {
			t.Errorf("CheckedSegmentKey(%q, %q): %v", bad[0], bad[1], err)
		}
	}
	if k, err := CheckedSegmentKey("wiki", iv[0], iv[1], "v1", 2); err != nil || k != SegmentKey("wiki", iv[0], iv[1], "v1", 2) {
		t.Fatalf("%s %v", k, err)
	}
}

// S3 deletion stays inside the storage's bucket and base key.
func TestS3DeleteConfined(t *testing.T) {
	s := &S3{bucket: "segs", baseKey: "base"}
	for _, spec := range []LoadSpec{
		{Type: "s3_zip", Bucket: "other", Key: "base/wiki/x/v/0/index.zip"},
		{Type: "s3_zip", Bucket: "segs", Key: "elsewhere/wiki/x/v/0/index.zip"},
		{Type: "s3_zip", Bucket: "segs", Key: "base/wiki/x/v/0/notes.txt"},
	} {
		if err := s.Delete(context.Background(), spec); err == nil {
			t.Errorf("Delete(%+v) succeeded", spec)
		}
	}
}
