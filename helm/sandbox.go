package main

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// walls are the sandbox's walls that hold in this process.
type walls struct {
	NoNewPrivs bool `json:"noNewPrivs"`
	Seccomp    bool `json:"seccomp"`
	// Landlock is the Landlock ABI applied (0: none: the kernel has no Landlock).
	Landlock    int  `json:"landlock"`
	LandlockNet bool `json:"landlockNet"`
}

// refusedCalls are the system calls the seccomp filter refuses with EPERM:
// every way to open a file or reach the network, to run a program, and the
// escape hatches (other processes' memory, mounts, namespaces, kernel
// programs and keys), and the calls that change files by path. The chart is
// in memory: nothing the render does needs any of them. Names the
// architecture does not have (open on arm64) are left out.
var refusedCalls = []string{
	"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
	"execve", "execveat",
	"open", "openat", "openat2", "creat", "open_by_handle_at", "name_to_handle_at", "uselib",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
	"mount", "umount2", "fsopen", "fsmount", "fsconfig", "move_mount", "open_tree", "mount_setattr",
	"unshare", "setns", "chroot", "pivot_root",
	"bpf", "keyctl", "add_key", "request_key", "perf_event_open", "userfaultfd", "fanotify_init",
	"unlink", "unlinkat", "rmdir", "rename", "renameat", "renameat2", "mkdir", "mkdirat",
	"link", "linkat", "symlink", "symlinkat", "mknod", "mknodat", "truncate",
	"chmod", "fchmodat", "fchmodat2", "chown", "lchown", "fchownat",
	"setxattr", "lsetxattr", "removexattr", "lremovexattr",
}

// raiseWalls puts up the walls on every thread of the process: Landlock
// (every filesystem access, and TCP bind and connect on ABI 4 or later, where
// the kernel has it), no_new_privs, and the seccomp filter. Without seccomp
// there is no render.
func raiseWalls() (walls, error) {
	var w walls
	// Landlock first: it needs no_new_privs, which it sets on every thread,
	// and its own system calls, which the seccomp filter leaves alone.
	if abi, err := llsys.LandlockGetABIVersion(); err == nil && abi > 0 {
		if err := landlock.V11.BestEffort().Restrict(); err != nil {
			return w, fmt.Errorf("the kernel refused the Landlock ruleset (ABI %d): %v", abi, err)
		}
		w.Landlock = min(abi, 11)
		w.LandlockNet = abi >= 4
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	info, err := arch.GetInfo("")
	if err != nil {
		return w, fmt.Errorf("no seccomp filter for this architecture (%s): %v; the chart is not rendered", runtime.GOARCH, err)
	}
	var names []string
	for _, n := range refusedCalls {
		if _, ok := info.SyscallNames[n]; ok {
			names = append(names, n)
		}
	}
	filter := seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls:      []seccomp.SyscallGroup{{Names: names, Action: seccomp.ActionErrno}},
		},
	}
	if err := seccomp.LoadFilter(filter); err != nil {
		return w, fmt.Errorf("the kernel refused the seccomp filter (%v); the chart is not rendered without it", err)
	}
	if err := refuseOtherArches(uint32(info.ID)); err != nil {
		return w, fmt.Errorf("the kernel refused the seccomp filter of other architectures (%v); the chart is not rendered without it", err)
	}
	w.NoNewPrivs = noNewPrivs()
	w.Seccomp = true
	return w, nil
}

// refuseOtherArches stacks a second filter refusing every system call made
// with another architecture's numbers (int 0x80 on amd64): the first filter
// knows only the native numbers.
func refuseOtherArches(native uint32) error {
	prog, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: native, SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
	})
	if err != nil {
		return err
	}
	raw := make([]unix.SockFilter, len(prog))
	for i, p := range prog {
		raw[i] = unix.SockFilter{Code: p.Op, Jt: p.Jt, Jf: p.Jf, K: p.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(raw)), Filter: &raw[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return errno
	}
	if r != 0 {
		return fmt.Errorf("thread %d could not be synchronised", r)
	}
	return nil
}

func noNewPrivs() bool {
	v, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	return err == nil && v == 1
}

// errTimeLimit is the context's cause when the render runs out of time.
var errTimeLimit = errors.New("the Helm time limit")

// watch ends the process when the render takes longer than timeout or its
// memory passes limit (checked every few milliseconds), and asks the garbage
// collector to keep under it. It returns the deadline.
func watch(limit int64, timeout time.Duration) time.Time {
	debug.SetMemoryLimit(limit)
	deadline := time.Now().Add(timeout)
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	go func() {
		for {
			time.Sleep(5 * time.Millisecond)
			metrics.Read(sample)
			if used := int64(sample[0].Value.Uint64()); used > limit+reserve {
				fail(exitMemory, "the render needed more than %d MiB of memory (the Helm limit): a template that includes itself without end, or builds ever larger values, does this", limit>>20)
			}
			if time.Now().After(deadline) {
				fail(exitTime, "the render took longer than %s (the Helm time limit): a template that loops or includes itself without end does this", timeout)
			}
		}
	}()
	return deadline
}

// reserve is the runtime's own memory (stacks, metadata) beside the heap the render may use.
const reserve = 16 << 20
