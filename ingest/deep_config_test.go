package ingest

import (
	"path/filepath"
	"testing"

	"strata/props"
	"strata/storage/deep"
)

// DeepStorageConfig reads every svc.storage.* and svc.s3.* key; a local store
// without a directory lives under the data dir.
func TestDeepStorageConfig(t *testing.T) {
	p := props.Defaults()
	for k, v := range map[string]string{
		"svc.storage.type": "s3", "svc.storage.bucket": "segs", "svc.storage.baseKey": "/druid/prod/",
		"svc.s3.endpoint": "http://127.0.0.1:9000", "svc.s3.accessKey": "AK", "svc.s3.secretKey": "SK",
		"svc.s3.region": "eu", "svc.storage.storageDirectory": "/var/segs",
	} {
		p.Set(k, v)
	}
	cfg, err := DeepStorageConfig(p)
	want := deep.Config{Type: "s3", StorageDirectory: "/var/segs", Bucket: "segs", BaseKey: "/druid/prod/",
		S3Endpoint: "http://127.0.0.1:9000", S3AccessKey: "AK", S3SecretKey: "SK", S3Region: "eu"}
	if err != nil || cfg != want {
		t.Fatalf("config %+v, %v", cfg, err)
	}
	local := props.Defaults()
	local.Set("svc.data.dir", "/data")
	if cfg, err := DeepStorageConfig(local); err != nil || cfg.Type != "local" || cfg.StorageDirectory != filepath.Join("/data", "deepstorage") {
		t.Fatalf("local config %+v, %v", cfg, err)
	}
}
