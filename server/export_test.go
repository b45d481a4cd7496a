package server

import "strata/fsm"

type fsmState = fsm.State
