// The pause container of every real node's pods: the process that holds a pod's namespaces.
// As PID 1 of the pod it must reap orphans (zombies would pile up otherwise), and it exits 0 on
// SIGTERM or SIGINT so that a sandbox stops at once instead of waiting for a SIGKILL. Static
// (CGO_ENABLED=0), so its image needs nothing but this binary.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for received := range signals {
		if received != syscall.SIGCHLD {
			os.Exit(0)
		}
		reapChildren()
	}
}

// reapChildren waits for every exited child without blocking: one SIGCHLD may stand for many.
func reapChildren() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
