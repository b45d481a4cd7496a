package ingest

import (
	"context"
	"encoding/json"
	"path/filepath"

	"strata/config"
	"strata/props"
	"strata/storage/deep"
)

// DeepStorageFromProps opens the deep storage svc.storage.* selects; a local
// store without a directory lives under <svc.data.dir>/deepstorage.
func DeepStorageFromProps(p *props.Properties) (deep.DeepStorage, error) {
	cfg, err := DeepStorageConfig(p)
	if err != nil {
		return nil, err
	}
	return deep.New(cfg)
}

// DeepStorageConfig is the deep storage configuration DeepStorageFromProps
// opens (config.ParseStorage), for those that only check load specs against it.
func DeepStorageConfig(p *props.Properties) (deep.Config, error) {
	sc := config.ParseStorage(p)
	cfg := deep.Config{
		Type:             sc.Type,
		StorageDirectory: sc.StorageDirectory,
		Bucket:           sc.Bucket,
		BaseKey:          sc.BaseKey,
		S3Endpoint:       sc.S3Endpoint,
		S3AccessKey:      sc.S3AccessKey,
		S3SecretKey:      sc.S3SecretKey,
		S3Region:         sc.S3Region,
	}
	if (cfg.Type == "" || cfg.Type == "local") && cfg.StorageDirectory == "" {
		dir, err := filepath.Abs(filepath.Join(sc.DataDir, "deepstorage"))
		if err != nil {
			return cfg, err
		}
		cfg.StorageDirectory = dir
	}
	return cfg, nil
}

// DeepUploader adapts deep storage to Uploader.
type DeepUploader struct{ Storage deep.DeepStorage }

// Put implements Uploader.
func (u DeepUploader) Put(ctx context.Context, key, localPath string) (json.RawMessage, error) {
	ls, err := u.Storage.Put(ctx, key, localPath)
	if err != nil {
		return nil, err
	}
	return json.Marshal(ls)
}

// DeepRemover deletes segment files named by a loadSpec JSON (the coordinator's
// sweeper uses it).
type DeepRemover struct{ Storage deep.DeepStorage }

// RemoveLoadSpec deletes the files of one loadSpec.
func (r DeepRemover) RemoveLoadSpec(ctx context.Context, loadSpec string) error {
	var ls deep.LoadSpec
	if err := json.Unmarshal([]byte(loadSpec), &ls); err != nil {
		return err
	}
	if ls.Type == "tombstone" {
		return nil // a tombstone has no file
	}
	return r.Storage.Delete(ctx, ls)
}
