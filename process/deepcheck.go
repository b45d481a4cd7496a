package process

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/go-hclog"

	"strata/config"
	"strata/ingest"
	"strata/props"
	"strata/server"
)

// deepCheckTimeout bounds the start-up check of deep storage.
const deepCheckTimeout = 30 * time.Second

// checkDeepStorage asks S3 deep storage, in the background, whether its
// endpoint, bucket and credentials work, and logs the answer: a mistake in
// svc.storage.* or svc.s3.* shows in the log when the process starts, not
// when its first segment is written, loaded or deleted. The process starts
// either way (S3 may only be unreachable for a while). Routers do not use
// deep storage and are not checked; neither is local storage, whose
// directory the process creates itself.
func (proc *Process) checkDeepStorage(p *props.Properties, roles []string, logger hclog.Logger) {
	if config.ParseStorage(p).Type != "s3" || !containsAny(roles, server.RoleCoordinator, server.RoleHistorical, server.RoleBroker, server.RoleMiddleManager) {
		return
	}
	ds, err := ingest.DeepStorageFromProps(p)
	if err != nil {
		return // the roles that use it have refused to start already
	}
	checker, ok := ds.(interface{ Check(context.Context) error })
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), deepCheckTimeout)
	proc.stop = append(proc.stop, cancel)
	log := logger.Named("deepstorage")
	sc := config.ParseStorage(p)
	go func() {
		defer cancel()
		err := checker.Check(ctx)
		switch {
		case errors.Is(ctx.Err(), context.Canceled):
			// The process is closing.
		case err != nil:
			log.Error("deep storage is not usable: segments cannot be written, loaded or deleted until it is; check svc.storage.* and svc.s3.*",
				"bucket", sc.Bucket, "baseKey", sc.BaseKey, "error", err)
		default:
			log.Info("deep storage answers", "bucket", sc.Bucket, "baseKey", sc.BaseKey)
		}
	}()
}

func containsAny(list []string, want ...string) bool {
	for _, w := range want {
		if contains(list, w) {
			return true
		}
	}
	return false
}
