package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"strata/config"
	"strata/process"
	"strata/props"
	"strata/tlsconf"
)

// setFlags collects repeated --set key=value overrides.
type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, ",") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

func newLogger(p *props.Properties, name string) hclog.Logger {
	lc, _ := config.ParseLog(p) // an unknown level or a malformed svc.log.json logs at info, as text
	level := hclog.LevelFromString(lc.Level)
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	return hclog.New(&hclog.LoggerOptions{Name: name, Level: level, JSONFormat: lc.JSON, Output: os.Stderr})
}

// loadProps layers defaults < --config file < explicit flags < --set; it
// returns the file's unknown svc.* properties too (unknownProperties).
func loadProps(configFile string, flags map[string]string, sets setFlags) (*props.Properties, [][2]string, error) {
	p := props.Defaults()
	var unknown [][2]string
	if configFile != "" {
		f, err := props.Load(configFile)
		if err != nil {
			return nil, nil, err
		}
		p.Merge(f)
		unknown = unknownProperties(f)
	}
	for k, v := range flags {
		p.Set(k, v)
	}
	if err := applySets(p, sets); err != nil {
		return nil, nil, err
	}
	return p, unknown, nil
}

// knownProperties are the names of every property Strata reads.
func knownProperties() []string {
	names := make([]string, len(config.Keys))
	for i, key := range config.Keys {
		names[i] = key.Name
	}
	return names
}

// unknownProperties are a configuration file's svc.* keys that Strata does
// not have, each with the nearest one it has ("" if none is near): read by
// nothing, a typo there leaves the default in force. They are warned about,
// not refused, since a file may carry a newer version's keys (a rollback);
// other namespaces (druid.*) are not Strata's to judge.
func unknownProperties(f *props.Properties) [][2]string {
	var out [][2]string
	for _, k := range f.Keys() {
		if _, known := config.Lookup(k); strings.HasPrefix(k, "svc.") && !known {
			out = append(out, [2]string{k, nearest(k, knownProperties())})
		}
	}
	return out
}

// warnUnknown logs unknownProperties' findings once the logger exists.
func warnUnknown(logger hclog.Logger, file string, unknown [][2]string) {
	for _, u := range unknown {
		logger.Warn("unknown property in the configuration file, ignored", "file", file, "property", u[0], "nearest", u[1])
	}
}

func applySets(p *props.Properties, sets setFlags) error {
	for _, kv := range sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, "svc.") {
			return usagef("--set %q: want svc.key=value", kv)
		}
		// Every property Strata reads is in config.Keys: any other would be
		// stored and never read, the node running with the default.
		if _, known := config.Lookup(k); !known {
			return usagef("--set %q: unknown property %q%s (README, \"Configuration\", lists them)", kv, k, didYouMean(k, knownProperties()...))
		}
		p.Set(k, v)
	}
	return nil
}

// explicit returns the flags the user actually passed, mapped to property keys.
func explicit(fs *flag.FlagSet, keys map[string]string) map[string]string {
	out := map[string]string{}
	fs.Visit(func(f *flag.Flag) {
		if k, ok := keys[f.Name]; ok {
			out[k] = f.Value.String()
		}
	})
	return out
}

func runServer(args []string) error {
	fs := newFlagSet("server", "server --roles ROLES --http HOST:PORT [--coordinators URL,...] [--id ID --raft HOST:PORT --data DIR --peers ...] [--config FILE] [--set svc.key=value]...")
	fs.String("id", "", "node id (svc.node.id)")
	fs.String("roles", "coordinator,overlord", "comma-separated roles (svc.node.roles)")
	fs.String("http", "", "HTTP listen address HOST:PORT (svc.http.address)")
	fs.String("raft", "", "Raft listen address HOST:PORT (svc.raft.address)")
	fs.String("data", "", "data directory (svc.data.dir)")
	fs.String("peers", "", "static peers ID=RAFTHOST:PORT=HTTPURL,... (svc.raft.peers)")
	fs.String("coordinators", "", "the control nodes' URLs or host:port, comma-separated; the process announces itself and finds the others through them (svc.discovery.coordinators)")
	config := fs.String("config", "", "runtime.properties file")
	var sets setFlags
	fs.Var(&sets, "set", "override a property: --set svc.key=value (repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	p, unknown, err := loadProps(*config, explicit(fs, map[string]string{
		"id": "svc.node.id", "roles": "svc.node.roles", "http": "svc.http.address", "raft": "svc.raft.address",
		"data": "svc.data.dir", "peers": "svc.raft.peers", "coordinators": "svc.discovery.coordinators",
	}), sets)
	if err != nil {
		return err
	}
	logger := newLogger(p, "strata")
	warnUnknown(logger, *config, unknown)
	// Not quickstart's: it binds 127.0.0.1 and may run open.
	if err := checkExposure(p); err != nil {
		return startError(logger, err)
	}
	proc, err := process.StartServer(p, logger)
	if err != nil {
		return startError(logger, err)
	}
	return waitForSignal(proc)
}

// checkExposure is config.CheckExposure (runServer's flag named config
// hides the package).
func checkExposure(p *props.Properties) error { return config.CheckExposure(p) }

func runQuickstart(args []string) error {
	fs := newFlagSet("quickstart", "quickstart [--data DIR] [--tls-dir DIR] [--config FILE] [--set svc.key=value]...")
	data := fs.String("data", "./var", "data directory")
	tlsDir := fs.String("tls-dir", "", "serve HTTPS only, with the CA and node certificate in DIR (ca.pem, node.pem, node-key.pem), made there (a new self-signed CA) if ca.pem is missing; clients verify with --cacert DIR/ca.pem")
	configFile := fs.String("config", "", "runtime.properties file")
	var sets setFlags
	fs.Var(&sets, "set", "override a property: --set svc.key=value (repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	dir, err := process.EnsureDir(*data)
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	p := process.QuickstartProps(dir)
	if *tlsDir != "" {
		abs, err := filepath.Abs(*tlsDir) // the logs and /status/properties name the files wherever the process runs
		if err != nil {
			return fmt.Errorf("--tls-dir: %w", err)
		}
		f, err := tlsconf.EnsureDir(abs)
		if err != nil {
			return fmt.Errorf("--tls-dir: %w", err)
		}
		useTLSDir(p, f)
	}
	var unknown [][2]string
	if *configFile != "" {
		f, err := props.Load(*configFile)
		if err != nil {
			return err
		}
		p.Merge(f)
		unknown = unknownProperties(f)
	}
	if err := applySets(p, sets); err != nil {
		return err
	}
	logger := newLogger(p, "strata")
	warnUnknown(logger, *configFile, unknown)
	proc, err := process.StartQuickstart(p, logger)
	if err != nil {
		return startError(logger, err)
	}
	logger.Info("quickstart is up", "router", config.ListenerURL(p, config.ParseRouter(p).Address), "coordinator", config.ParseNode(p).URL(), "data", dir)
	return waitForSignal(proc)
}

// useTLSDir makes p serve HTTPS only with the certificates of f, and
// trust f's CA on the calls between its listeners.
func useTLSDir(p *props.Properties, f tlsconf.Files) {
	p.Set("svc.enablePlaintextPort", "false")
	p.Set("svc.enableTlsPort", "true")
	p.Set("svc.server.https.certFile", f.Cert)
	p.Set("svc.server.https.keyFile", f.Key)
	p.Set("svc.client.https.trustStoreFile", f.CA)
}

// waitForSignal runs until SIGINT or SIGTERM; SIGHUP re-reads the HTTPS
// certificates.
func waitForSignal(proc *process.Process) error {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	for {
		select {
		case s := <-sig:
			if s == syscall.SIGHUP {
				if err := proc.ReloadCertificates(); err != nil {
					proc.Logger.Error("SIGHUP: TLS certificates not reloaded; serving the previous ones", "error", err)
				} else {
					proc.Logger.Info("SIGHUP: TLS certificates reloaded")
				}
				continue
			}
			proc.Logger.Info("shutting down", "signal", s.String())
		case err := <-proc.Err():
			proc.Close()
			return err
		}
		return proc.Close()
	}
}
