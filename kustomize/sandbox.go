package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// sandbox takes away what kustomize could reach beyond its in-memory files:
// no program can be found to run (a remote base would run `git`), and every
// connection is refused (a remote file would be fetched over HTTP).
func sandbox() {
	os.Clearenv()
	_ = os.Setenv("PATH", "")
	refuse := func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no network in the kustomize sandbox")
	}
	http.DefaultTransport = &http.Transport{DialContext: refuse, Proxy: nil}
	http.DefaultClient = &http.Client{Transport: http.DefaultTransport}
}

// watch ends the process when the build takes longer than timeout or its
// memory passes limit (checked every few milliseconds: a patch bomb grows
// fast, but not that fast), and asks the garbage collector to keep under it.
func watch(limit int64, timeout time.Duration) {
	debug.SetMemoryLimit(limit)
	deadline := time.Now().Add(timeout)
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	go func() {
		for {
			time.Sleep(5 * time.Millisecond)
			metrics.Read(sample)
			if used := int64(sample[0].Value.Uint64()); used > limit+reserve {
				fail(exitMemory, "the build needed more than %d MiB of memory (the kustomize limit); refused", limit>>20)
			}
			if time.Now().After(deadline) {
				fail(exitTime, "the build took longer than %s (the kustomize time limit); refused", timeout)
			}
		}
	}()
}

// reserve is the runtime's own memory (stacks, metadata) beside the heap the build may use.
const reserve = 16 << 20
