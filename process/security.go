package process

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	basicauth "strata/auth/basic"
	"strata/cluster"
	"strata/commands"
	"strata/config"
	"strata/escalator"
	"strata/fsm"
	"strata/props"
	"strata/server"
)

// basicName is the one authenticator and authorizer name Strata has.
const basicName = "basic"

// newSecurity builds a process's authenticator chain from
// svc.auth.authenticatorChain: nil when it is empty (the API stays open).
// A control node (node set) reads users and roles from its FSM and, as
// leader, creates the initial users; any other process keeps a copy of the
// leader's database, fetched from controlURLs (basicauth.Remote). Background
// work is added to stop.
func newSecurity(p *props.Properties, node *cluster.Node, controlURLs []string, logger hclog.Logger, stop *[]func()) (*server.Security, error) {
	ac, err := config.ParseAuth(p)
	if err != nil {
		return nil, err
	}
	if len(ac.AuthenticatorChain) == 0 {
		return nil, nil
	}
	for _, name := range ac.AuthenticatorChain {
		if name != basicName {
			return nil, fmt.Errorf("svc.auth.authenticatorChain names %q: the only authenticator Strata has is %q", name, basicName)
		}
	}
	bc, err := config.ParseBasicAuth(p)
	if err != nil {
		return nil, err
	}
	if len(ac.Authorizers) > 0 && !contains(ac.Authorizers, bc.AuthorizerName) {
		return nil, fmt.Errorf("svc.auth.authenticator.basic.authorizerName=%s is not in svc.auth.authorizers %v", bc.AuthorizerName, ac.Authorizers)
	}
	ctx, cancel := context.WithCancel(context.Background())
	*stop = append(*stop, cancel)
	var src basicauth.Source
	if node != nil {
		src = &controlSource{node: node, leader: &basicauth.Remote{
			URLs: func() []string {
				if u := node.LeaderURL(); u != "" && u != node.HTTPURL() {
					return []string{u}
				}
				return nil
			},
			Client: escalator.NodeClient(p, 10*time.Second),
			MinGap: 100 * time.Millisecond,
			Log:    logger.Named("security"),
		}}
		go bootstrapSecurity(ctx, node, bc, logger.Named("security"))
	} else {
		if len(controlURLs) == 0 {
			return nil, fmt.Errorf("svc.auth.authenticatorChain is set, and this process knows no control node to fetch users and roles from (svc.discovery.coordinators)")
		}
		r := &basicauth.Remote{
			URLs:     func() []string { return controlURLs },
			Client:   escalator.NodeClient(p, 0),
			PollWait: bc.PollingPeriod,
			MinGap:   100 * time.Millisecond,
			Log:      logger.Named("security"),
		}
		go r.Run(ctx)
		src = r
	}
	sec := &server.Security{Chain: []server.Authn{{
		Name:          basicName,
		Authenticator: basicauth.NewAuthenticator(basicName, bc.InternalClientUsername, src),
		Authorizer:    basicauth.NewAuthorizer(src),
	}}}
	// Only the leader can propose the audit entry of a window of
	// authentication failures: every other node sends its windows there.
	client := escalator.NodeClient(p, 10*time.Second)
	if node == nil {
		sec.RecordFailures = server.ForwardAuthFailures(client, func() []string { return controlURLs }, config.ParseNode(p).URL())
	} else {
		propose := server.ProposeAuthFailures(node)
		forward := server.ForwardAuthFailures(client, func() []string {
			if u := node.LeaderURL(); u != "" && u != node.HTTPURL() {
				return []string{u}
			}
			return nil
		}, node.ID())
		sec.RecordFailures = func(r server.FailureReport) error {
			if node.IsLeader() {
				return propose(r)
			}
			return forward(r)
		}
	}
	return sec, nil
}

// controlURLsOf is where a data process finds the control nodes: the first
// of its roles' control-node lists that is set.
func controlURLsOf(p *props.Properties) []string {
	for _, key := range append([]string{"svc.broker.coordinatorUrls"}, controlURLKeys...) {
		if v := strings.TrimSpace(p.String(key)); v != "" {
			var out []string
			for _, u := range config.ParseList(v) {
				if !strings.Contains(u, "://") {
					u = "http://" + u
				}
				out = append(out, strings.TrimRight(u, "/"))
			}
			return out
		}
	}
	dc, _ := config.ParseDiscovery(p)
	return dc.Coordinators
}

// bootstrapSecurity creates, once, the initial admin and internal client
// (Druid's initialAdminPassword and initialInternalClientPassword): while
// this node leads and the database lacks them, it hashes the configured
// passwords and proposes one BootstrapSecurity. It returns when the users
// exist or ctx ends.
func bootstrapSecurity(ctx context.Context, node *cluster.Node, bc config.BasicAuth, log hclog.Logger) {
	if bc.InitialAdminPassword == "" && bc.InitialInternalClientPassword == "" {
		return
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !node.IsLeader() {
			continue
		}
		cmd, needed, err := bootstrapCommand(node, bc)
		if err != nil {
			log.Error("cannot hash the initial passwords", "error", err)
			return
		}
		if !needed {
			return
		}
		if _, err := node.Propose(cmd, commands.Audit{Author: "strata", Comment: "initial users (svc.auth.authenticator.basic.initial*Password)"}, 10*time.Second); err != nil {
			log.Warn("cannot create the initial users yet; retrying", "error", err)
			continue
		}
		log.Info("created the initial users", "admin", cmd.Admin != nil, "internal_client", bc.InternalClientUsername)
		return
	}
}

// bootstrapCommand is the command creating what is missing, hashed here on
// the leader so that no password reaches the log.
func bootstrapCommand(node *cluster.Node, bc config.BasicAuth) (commands.BootstrapSecurity, bool, error) {
	var db *basicauth.DB
	node.FSM().Read(func(st *fsm.State) { db = st.SecurityDB() })
	cmd := commands.BootstrapSecurity{InternalUser: bc.InternalClientUsername}
	needs := func(name string) bool { return db.Users[name] == nil || db.AuthzUsers[name] == nil }
	hash := func(pw string) (*commands.HashedCredentials, error) {
		c, err := basicauth.Hash(pw)
		if err != nil {
			return nil, err
		}
		return &commands.HashedCredentials{Salt: c.Salt, Hash: c.Hash, Iterations: c.Iterations}, nil
	}
	var err error
	if bc.InitialAdminPassword != "" && needs(fsm.AdminUser) {
		if cmd.Admin, err = hash(bc.InitialAdminPassword); err != nil {
			return cmd, false, err
		}
	}
	if bc.InitialInternalClientPassword != "" && needs(bc.InternalClientUsername) {
		if cmd.Internal, err = hash(bc.InitialInternalClientPassword); err != nil {
			return cmd, false, err
		}
	}
	return cmd, cmd.Admin != nil || cmd.Internal != nil, nil
}

// controlSource is a control node's database: its FSM's, which on a
// follower may lag the leader's by the commit in flight. So a follower that
// does not know a user or denies a check asks the leader for its database,
// and answers from whichever copy is newer: a write acknowledged by the
// leader is seen on every node at once.
type controlSource struct {
	node   *cluster.Node
	leader *basicauth.Remote
}

func (c *controlSource) fsmDB() *basicauth.DB {
	var db *basicauth.DB
	c.node.FSM().Read(func(st *fsm.State) { db = st.SecurityDB() })
	return db
}

// Current implements basicauth.Source.
func (c *controlSource) Current() *basicauth.DB {
	db := c.fsmDB()
	if l := c.leader.Current(); l != nil && l.Version > db.Version {
		return l
	}
	return db
}

// Refresh implements basicauth.Source: the leader's FSM is current.
func (c *controlSource) Refresh(limit bool) *basicauth.DB {
	if !c.node.IsLeader() {
		c.leader.Refresh(limit)
	}
	return c.Current()
}
