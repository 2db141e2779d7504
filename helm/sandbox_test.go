package main

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// TestLandlockAloneRefusesFilesAndTCP shows the Landlock wall holding by
// itself (the seccomp filter refuses the same calls first, with EPERM): in a
// child process of this test, under Landlock only, reading a file and a TCP
// connect to a loopback listener are refused with EACCES on ABI 4 and later.
func TestLandlockAloneRefusesFilesAndTCP(t *testing.T) {
	if addr := os.Getenv("LANDLOCK_CHILD"); addr != "" {
		landlockChild(addr)
		return
	}
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil {
		abi = 0
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLandlockAloneRefusesFilesAndTCP$")
	cmd.Env = []string{"LANDLOCK_CHILD=" + ln.Addr().String()}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	want := "read: ok\nconnect: ok\n"
	switch {
	case abi >= 4:
		want = "read: permission denied\nconnect: permission denied\n"
	case abi >= 1:
		want = "read: permission denied\nconnect: ok\n"
	}
	if got := string(out); !strings.HasPrefix(got, want) {
		t.Fatalf("Landlock ABI %d: got %q, want %q", abi, got, want)
	}
	t.Logf("Landlock ABI %d on this kernel: %q", abi, want)
}

func landlockChild(addr string) {
	if err := landlock.V11.BestEffort().Restrict(); err != nil {
		os.Stdout.WriteString("restrict: " + err.Error() + "\n")
		os.Exit(1)
	}
	say := func(what string, err error) {
		var errno syscall.Errno
		switch {
		case err == nil:
			os.Stdout.WriteString(what + ": ok\n")
		case errors.As(err, &errno):
			os.Stdout.WriteString(what + ": " + errno.Error() + "\n")
		default:
			os.Stdout.WriteString(what + ": " + err.Error() + "\n")
		}
	}
	_, err := os.ReadFile("/etc/hostname")
	say("read", err)
	c, err := net.Dial("tcp", addr)
	if err == nil {
		c.Close()
	}
	say("connect", err)
	os.Exit(0)
}
