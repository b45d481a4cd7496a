package deep

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3 stores each segment as a zip archive holding index.seg (stored, not
// deflated: segment blocks are already encoded) at
// <baseKey>/<key>/index.zip, as Druid's s3_zip load specs expect.
type S3 struct {
	client  *minio.Client
	bucket  string
	baseKey string
}

// ZipFile is the object name of a segment archive inside its key.
const ZipFile = "index.zip"

// NewS3 returns S3 storage for cfg. It builds the client without
// contacting the service.
func NewS3(cfg Config) (*S3, error) {
	if cfg.Bucket == "" {
		return nil, fmt.Errorf("deep: s3 storage needs %s", PropBucket)
	}
	host, secure, err := parseEndpoint(cfg.S3Endpoint)
	if err != nil {
		return nil, err
	}
	client, err := minio.New(host, &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.S3AccessKey, cfg.S3SecretKey, ""),
		Secure: secure,
		Region: cfg.S3Region,
	})
	if err != nil {
		return nil, fmt.Errorf("deep: s3 client: %w", err)
	}
	return &S3{client: client, bucket: cfg.Bucket, baseKey: strings.Trim(cfg.BaseKey, "/")}, nil
}

// parseEndpoint accepts host[:port] (TLS) or an http:// or https:// URL.
func parseEndpoint(ep string) (host string, secure bool, err error) {
	if ep == "" {
		return "s3.amazonaws.com", true, nil
	}
	if !strings.Contains(ep, "://") {
		return ep, true, nil
	}
	u, err := url.Parse(ep)
	if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return "", false, fmt.Errorf("deep: bad %s %q", PropS3Endpoint, ep)
	}
	switch u.Scheme {
	case "http":
		return u.Host, false, nil
	case "https":
		return u.Host, true, nil
	}
	return "", false, fmt.Errorf("deep: bad %s scheme %q", PropS3Endpoint, u.Scheme)
}

// objectKey maps a segment key to its object key.
func (s *S3) objectKey(key string) string {
	if s.baseKey == "" {
		return key + "/" + ZipFile
	}
	return s.baseKey + "/" + key + "/" + ZipFile
}

// segmentKey maps an object key back to a segment key (ok=false for objects
// that are not segment archives under the base key).
func (s *S3) segmentKey(object string) (string, bool) {
	rest := object
	if s.baseKey != "" {
		if !strings.HasPrefix(object, s.baseKey+"/") {
			return "", false
		}
		rest = object[len(s.baseKey)+1:]
	}
	key, ok := strings.CutSuffix(rest, "/"+ZipFile)
	if !ok || checkKey(key) != nil {
		return "", false
	}
	return key, true
}

// Put implements DeepStorage: it zips the segment into a temporary file and
// uploads it. The archive is staged beside the segment file, whose directory
// the caller writes anyway, not in os.TempDir: a container's root file system
// may be read-only or small. minio-go sends an archive above 16 MiB as a
// multipart upload of 16 MiB parts, aborted on failure, so the object
// appears only whole (TestS3MultipartUpload checks it against a real S3
// server).
func (s *S3) Put(ctx context.Context, key, localPath string) (LoadSpec, error) {
	if err := checkKey(key); err != nil {
		return LoadSpec{}, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(localPath), ".upload-*.zip")
	if err != nil {
		return LoadSpec{}, err
	}
	defer os.Remove(tmp.Name())
	if err := zipSegment(tmp, localPath); err != nil {
		tmp.Close()
		return LoadSpec{}, err
	}
	if err := tmp.Close(); err != nil {
		return LoadSpec{}, err
	}
	obj := s.objectKey(key)
	if _, err := s.client.FPutObject(ctx, s.bucket, obj, tmp.Name(), minio.PutObjectOptions{ContentType: "application/zip"}); err != nil {
		return LoadSpec{}, fmt.Errorf("deep: put s3://%s/%s: %w", s.bucket, obj, err)
	}
	return LoadSpec{Type: "s3_zip", Bucket: s.bucket, Key: obj}, nil
}

// Get implements DeepStorage: it downloads the archive and extracts
// index.seg to localPath.
func (s *S3) Get(ctx context.Context, spec LoadSpec, localPath string) error {
	if spec.Type != "s3_zip" || spec.Bucket == "" || spec.Key == "" {
		return fmt.Errorf("deep: s3 storage cannot handle load spec %+v", spec)
	}
	if err := os.MkdirAll(filepath.Dir(localPath), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(localPath), ".download-*.zip")
	if err != nil {
		return err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	obj, err := s.client.GetObject(ctx, spec.Bucket, spec.Key, minio.GetObjectOptions{})
	if err != nil {
		return fmt.Errorf("deep: get s3://%s/%s: %w", spec.Bucket, spec.Key, err)
	}
	defer obj.Close()
	f, err := os.Create(tmp.Name())
	if err != nil {
		return err
	}
	_, err = io.Copy(f, obj)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if minio.ToErrorResponse(err).Code == "NoSuchKey" {
			// As a local file that is gone: callers tell a deleted segment
			// from a failing store with errors.Is(err, fs.ErrNotExist).
			return fmt.Errorf("deep: get s3://%s/%s: %w (%v)", spec.Bucket, spec.Key, fs.ErrNotExist, err)
		}
		return fmt.Errorf("deep: get s3://%s/%s: %w", spec.Bucket, spec.Key, err)
	}
	return unzipSegment(tmp.Name(), localPath)
}

// keyOf returns the segment key of the archive spec names, refusing objects
// outside this storage's bucket and base key.
func (s *S3) keyOf(spec LoadSpec) (string, error) {
	if spec.Bucket != s.bucket {
		return "", fmt.Errorf("deep: bucket %q is not the storage's bucket %q", spec.Bucket, s.bucket)
	}
	key, ok := s.segmentKey(spec.Key)
	if !ok {
		return "", fmt.Errorf("deep: object %q is not a segment archive (<key>/%s) under base key %q", spec.Key, ZipFile, s.baseKey)
	}
	return key, nil
}

// Delete implements DeepStorage. Only segment archives of this storage's
// bucket and base key are deleted, so that a load spec can never make the
// coordinator remove other objects its credentials reach.
func (s *S3) Delete(ctx context.Context, spec LoadSpec) error {
	if spec.Type != "s3_zip" || spec.Bucket == "" || spec.Key == "" {
		return fmt.Errorf("deep: s3 storage cannot handle load spec %+v", spec)
	}
	if _, err := s.keyOf(spec); err != nil {
		return err
	}
	if err := s.client.RemoveObject(ctx, spec.Bucket, spec.Key, minio.RemoveObjectOptions{}); err != nil {
		return fmt.Errorf("deep: delete s3://%s/%s: %w", spec.Bucket, spec.Key, err)
	}
	return nil
}

// List implements DeepStorage.
func (s *S3) List(ctx context.Context, prefix string) ([]string, error) {
	p := prefix
	if s.baseKey != "" {
		p = s.baseKey + "/" + prefix
	}
	var keys []string
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: p, Recursive: true}) {
		if obj.Err != nil {
			return nil, fmt.Errorf("deep: list s3://%s/%s: %w", s.bucket, p, obj.Err)
		}
		if key, ok := s.segmentKey(obj.Key); ok && strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	return keys, nil
}

// Check asks the service for at most one object under the base key, so that
// a process finds a wrong endpoint, bucket or credentials when it starts
// rather than at its first segment. The error carries the service's reason.
func (s *S3) Check(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the listing after the first object
	p := ""
	if s.baseKey != "" {
		p = s.baseKey + "/"
	}
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: p, MaxKeys: 1}) {
		if obj.Err != nil {
			return fmt.Errorf("deep: s3://%s/%s is not usable: %w", s.bucket, p, obj.Err)
		}
		break
	}
	return nil
}

// zipSegment writes a zip archive holding the file at segPath as
// index.seg, stored uncompressed.
func zipSegment(w io.Writer, segPath string) error {
	src, err := os.Open(segPath)
	if err != nil {
		return err
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return err
	}
	zw := zip.NewWriter(w)
	hdr := &zip.FileHeader{Name: SegmentFile, Method: zip.Store, Modified: st.ModTime()}
	hdr.SetMode(0o644)
	fw, err := zw.CreateHeader(hdr)
	if err != nil {
		return err
	}
	if _, err := io.Copy(fw, src); err != nil {
		return err
	}
	return zw.Close()
}

// unzipSegment extracts index.seg from the archive at zipPath to dst,
// atomically. The zip reader verifies the entry's CRC-32.
func unzipSegment(zipPath, dst string) error {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return fmt.Errorf("deep: segment archive: %w", err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Name != SegmentFile {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return fmt.Errorf("deep: segment archive: %w", err)
		}
		defer rc.Close()
		if err := copyFileAtomic(dst, rc); err != nil {
			return fmt.Errorf("deep: segment archive: %w", err)
		}
		return nil
	}
	return fmt.Errorf("deep: segment archive has no %s", SegmentFile)
}
