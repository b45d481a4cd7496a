package server

import "strata/auth"

// Druid's BasicSecurityResourceFilter: the basic-security API needs READ
// (to look) or WRITE (to change) on the CONFIG resource "security".
var (
	securityRead  = Access{Kind: OnResource, Type: auth.Config, Name: "security", Action: auth.Read}
	securityWrite = Access{Kind: OnResource, Type: auth.Config, Name: "security", Action: auth.Write}
)
