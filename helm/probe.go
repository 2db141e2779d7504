package main

import (
	"encoding/json"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

const tokenPath = "/var/run/secrets/kubernetes.io/serviceaccount/token"

// socketBeforeWalls opens the TCP socket the probe's connect uses before the
// walls go up (after them no socket can be made): so the probe shows connect
// itself refused, not only socket. -1 if it could not be made.
func socketBeforeWalls() int {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	return fd
}

// runProbe tries what the walls forbid and prints what happened, with the walls that hold.
func runProbe(held walls, sock, port int) {
	attempts := map[string]string{
		"socket":             outcome(trySocket()),
		"open /etc/hostname": outcome(tryRead("/etc/hostname")),
		"read " + tokenPath:  outcome(tryRead(tokenPath)),
		"execve /bin/true":   outcome(tryExec("/bin/true")),
	}
	if port > 0 {
		attempts[fmt.Sprintf("connect 127.0.0.1:%d", port)] = outcome(tryConnect(sock, port))
	}
	data, _ := json.Marshal(map[string]any{"walls": held, "attempts": attempts})
	os.Stdout.Write(append(data, '\n'))
}

func outcome(err error) string {
	if err != nil {
		return "refused: " + err.Error()
	}
	return "ok"
}

func trySocket() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

func tryConnect(sock, port int) error {
	if sock < 0 {
		return fmt.Errorf("no socket could be made before the walls")
	}
	defer unix.Close(sock)
	return unix.Connect(sock, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
}

func tryRead(path string) error {
	_, err := os.ReadFile(path)
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// tryExec runs a program in a child (execve there: here it would replace the helper).
func tryExec(path string) error {
	pid, err := syscall.ForkExec(path, []string{path}, &syscall.ProcAttr{Env: []string{}})
	if err != nil {
		return err
	}
	var status syscall.WaitStatus
	_, err = syscall.Wait4(pid, &status, 0, nil)
	return err
}
