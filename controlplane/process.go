package main

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// process is one child OS process (this binary re-executed with a
// subcommand). While it is wanted, an unexpected exit restarts it after a
// capped backoff; stop() ends it with SIGTERM, then SIGKILL after a grace
// period, and waits until it is gone.
type process struct {
	name    string
	path    string
	args    []string
	logFile string
	pidFile string
	logf    func(string, ...any)

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{} // closed when cmd has exited
	wanted bool
}

func (p *process) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// start spawns the process unless it is already running.
func (p *process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wanted = true
	if p.done != nil {
		select {
		case <-p.done:
		default:
			return nil
		}
	}
	return p.spawnLocked()
}

func (p *process) spawnLocked() error {
	log, err := os.OpenFile(p.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.path, p.args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:   true,            // our own shutdown order, not the terminal's
		Pdeathsig: syscall.SIGKILL, // never outlive the supervisor
	}
	if err := cmd.Start(); err != nil {
		log.Close()
		return err
	}
	_ = os.WriteFile(p.pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
	done := make(chan struct{})
	p.cmd, p.done = cmd, done
	started := time.Now()
	p.logf("%s started (pid %d)", p.name, cmd.Process.Pid)
	go func() {
		err := cmd.Wait()
		log.Close()
		close(done)
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.cmd != cmd {
			return
		}
		_ = os.Remove(p.pidFile)
		if !p.wanted {
			return
		}
		// Crashed: restart with backoff, shorter if it had run for a while.
		delay := 5 * time.Second
		if time.Since(started) > time.Minute {
			delay = time.Second
		}
		p.logf("%s exited unexpectedly (%v); restarting in %s", p.name, err, delay)
		go func() {
			time.Sleep(delay)
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.wanted && p.cmd == cmd {
				if err := p.spawnLocked(); err != nil {
					p.logf("%s: restart failed: %v", p.name, err)
				}
			}
		}()
	}()
	return nil
}

func (p *process) stop(grace time.Duration) {
	p.mu.Lock()
	p.wanted = false
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil || done == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		p.logf("%s did not stop within %s; killing it", p.name, grace)
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	// Anything the process left in its group goes too.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	p.logf("%s stopped", p.name)
}

func portInUse(port int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return true
	}
	l.Close()
	return false
}

// freePort asks the kernel for a port nothing listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freePortPair finds a free port whose successor is free too (etcd's client
// and peer ports).
func freePortPair() (int, error) {
	for range 50 {
		p, err := freePort()
		if err != nil {
			return 0, err
		}
		if p < 65535 && !portInUse(p+1) {
			return p, nil
		}
	}
	return 0, errors.New("none found in 50 tries")
}
