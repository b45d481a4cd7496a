package cluster

import (
	"crypto/tls"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// RaftTLS is the TLS of the Raft transport: Server's configuration must
// require and verify client certificates, so that only the cluster's own
// nodes can append to the log; Client dials peers, verifying them and
// presenting this node's certificate.
type RaftTLS struct {
	Server, Client *tls.Config
}

// newTransport listens on cfg.RaftAddr, over TLS when cfg.RaftTLS is set.
func newTransport(cfg Config, advertise *net.TCPAddr) (*raft.NetworkTransport, error) {
	if cfg.RaftTLS == nil {
		return raft.NewTCPTransportWithLogger(cfg.RaftAddr, advertise, 8, 5*time.Second, cfg.Logger.Named("transport"))
	}
	ln, err := net.Listen("tcp", cfg.RaftAddr)
	if err != nil {
		return nil, err
	}
	stream := &tlsStream{Listener: tls.NewListener(ln, cfg.RaftTLS.Server), advertise: advertise, client: cfg.RaftTLS.Client}
	return raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: stream, MaxPool: 8, Timeout: 5 * time.Second, Logger: cfg.Logger.Named("transport"),
	}), nil
}

// tlsStream is a raft.StreamLayer over TLS.
type tlsStream struct {
	net.Listener
	advertise net.Addr
	client    *tls.Config
}

// Dial connects to a peer and completes the handshake within timeout, so a
// peer that does not verify is an error here, not a stuck append.
func (s *tlsStream) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", string(address), s.client)
}

// Addr is the advertised address (the listener's may be 0.0.0.0).
func (s *tlsStream) Addr() net.Addr {
	if s.advertise != nil {
		return s.advertise
	}
	return s.Listener.Addr()
}
