package process

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"strata/internal/eventually"
	"strata/props"
	"strata/storage/deep/s3test"
)

// syncBuffer is a log destination several goroutines write.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A process with S3 deep storage says at start whether the bucket answers:
// with a wrong secret an error naming the bucket and S3's reason, with the
// right one that it answers.
func TestDeepStorageCheckedAtStart(t *testing.T) {
	srv := s3test.Start(t)
	for _, tc := range []struct {
		name, secret, want string
	}{
		{"wrong secret", "not-the-secret", `[ERROR] historical.deepstorage: deep storage is not usable`},
		{"right secret", s3test.SecretKey, `[INFO]  historical.deepstorage: deep storage answers: bucket=segments baseKey=strata`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := props.Defaults()
			p.Set("svc.node.roles", "historical")
			p.Set("svc.http.address", freePorts(t, 1)[0])
			p.Set("svc.data.dir", t.TempDir())
			for k, v := range srv.Properties("strata") {
				p.Set(k, v)
			}
			p.Set("svc.s3.secretKey", tc.secret)
			var logs syncBuffer
			proc, err := StartServer(p, hclog.New(&hclog.LoggerOptions{Name: "historical", Level: hclog.Info, Output: &logs}))
			if err != nil {
				t.Fatal(err)
			}
			defer proc.Close()
			eventually.True(t, "the deep storage check logged", func() bool { return strings.Contains(logs.String(), tc.want) },
				slow, eventually.Showing(logs.String))
			if tc.secret != s3test.SecretKey && !strings.Contains(logs.String(), "The request signature we calculated does not match") {
				t.Fatalf("the error does not give S3's reason:\n%s", logs.String())
			}
		})
	}
}
