// Package deep is deep storage: the durable home of segment files, from
// which historicals load them. Two implementations exist, chosen by
// Config.Type: "local" (a directory, the default, possibly on a shared
// mount) and "s3" (any S3-compatible service, through minio-go).
//
// A segment is stored under a key, a slash-separated relative path such as
// SegmentKey builds (dataSource/start_end/version/partition). Put returns a
// LoadSpec, the JSON object recorded in segment metadata that tells a
// historical where to fetch the file, in Druid's shapes:
//
//	{"type":"local","path":"/abs/dir/<key>/index.seg"}
//	{"type":"s3_zip","bucket":"b","key":"<baseKey>/<key>/index.zip"}
//
// Writes are atomic: a reader never sees a partial file (local: temporary
// file, fsync, rename; S3: the object appears whole when the upload
// completes). Get also writes its destination atomically.
package deep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// LoadSpec says where a stored segment is. Type "local" uses Path; type
// "s3_zip" uses Bucket and Key.
type LoadSpec struct {
	Type   string `json:"type"`
	Path   string `json:"path,omitempty"`
	Bucket string `json:"bucket,omitempty"`
	Key    string `json:"key,omitempty"`
}

// DeepStorage stores segment files.
type DeepStorage interface {
	// Put copies the file at localPath into storage under key.
	Put(ctx context.Context, key string, localPath string) (LoadSpec, error)
	// Get copies the stored segment to localPath.
	Get(ctx context.Context, spec LoadSpec, localPath string) error
	// Delete removes a stored segment; deleting a missing one is not an error.
	Delete(ctx context.Context, spec LoadSpec) error
	// List returns the keys of stored segments that start with prefix, sorted.
	List(ctx context.Context, prefix string) ([]string, error)
}

// Config selects and configures a DeepStorage (config.ParseStorage reads it
// from runtime properties, in ingest.DeepStorageConfig).
type Config struct {
	Type             string // "local" (default) or "s3"
	StorageDirectory string // local: root directory
	Bucket           string // s3
	BaseKey          string // s3: prefix of every object key
	S3Endpoint       string // s3: host:port, or a URL (http:// disables TLS)
	S3AccessKey      string
	S3SecretKey      string
	S3Region         string
}

// Property names of Config's fields, for error messages.
const (
	PropType             = "svc.storage.type"
	PropStorageDirectory = "svc.storage.storageDirectory"
	PropBucket           = "svc.storage.bucket"
	PropBaseKey          = "svc.storage.baseKey"
	PropS3Endpoint       = "svc.s3.endpoint"
	PropS3AccessKey      = "svc.s3.accessKey"
	PropS3SecretKey      = "svc.s3.secretKey"
	PropS3Region         = "svc.s3.region"
)

// New returns the DeepStorage cfg selects. It does not contact S3.
func New(cfg Config) (DeepStorage, error) {
	switch cfg.Type {
	case "", "local":
		return NewLocal(cfg.StorageDirectory)
	case "s3":
		return NewS3(cfg)
	}
	return nil, fmt.Errorf("deep: unknown storage type %q (want local or s3)", cfg.Type)
}

// SegmentFile is the file name of a segment inside its key directory.
const SegmentFile = "index.seg"

// SegmentKey is the conventional key of a segment: Druid's layout,
// dataSource/start_end/version/partitionNum. start, end and version are
// usually ISO-8601 timestamps.
func SegmentKey(dataSource, start, end, version string, partition int) string {
	return path.Join(dataSource, start+"_"+end, version, strconv.Itoa(partition))
}

// ErrBadKey is returned for keys that are empty, absolute, or that contain
// "." or ".." elements or empty elements.
var ErrBadKey = errors.New("deep: bad key")

// checkKey validates a key: relative, slash-separated, no empty, "." or
// ".." elements, so that it can never escape the storage root.
func checkKey(key string) error {
	if key == "" || strings.HasPrefix(key, "/") || strings.Contains(key, "\\") || strings.ContainsRune(key, 0) {
		return fmt.Errorf("%w: %q", ErrBadKey, key)
	}
	for _, el := range strings.Split(key, "/") {
		if el == "" || el == "." || el == ".." {
			return fmt.Errorf("%w: %q", ErrBadKey, key)
		}
	}
	return nil
}

// copyFileAtomic copies src (a reader) to dst through a temporary file in
// dst's directory, synced and renamed into place.
func copyFileAtomic(dst string, src io.Reader) error {
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(dst)+".tmp*")
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := io.Copy(tmp, src); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return err
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		d.Sync() // make the rename durable; not all file systems support it
		d.Close()
	}
	return nil
}
