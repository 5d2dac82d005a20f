package runtimeop

// PendingDelete names a server (Backend and Server) or a whole backend
// (Server empty) whose deferred delete the agent has not finished: HAProxy
// still has it although the applied plan does not.
type PendingDelete struct {
	Backend string `json:"backend"`
	Server  string `json:"server,omitempty"`
}
