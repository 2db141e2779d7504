package main

import (
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
	Landlock int `json:"landlock"`
	// LandlockNet: TCP bind refused by Landlock (ABI 4 and later); connect
	// is this helper's job, and the dialer checks each address.
	LandlockNet bool `json:"landlockNet"`
}

// readableFiles and readableDirs are the only paths Landlock lets the helper read: what Go's pure
// DNS resolver reads (nsswitch.conf, resolv.conf, hosts) and what
// crypto/x509 reads for the system roots on Linux (its certFiles and
// certDirectories, and where Debian's and Fedora's links there point).
// Nothing is writable.
var (
	readableFiles = []string{"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/host.conf"}
	readableDirs  = []string{
		"/etc/ssl", "/etc/pki", "/etc/ca-certificates", "/usr/share/ca-certificates",
		"/usr/local/share/ca-certificates", "/usr/share/pki",
	}
)

// refusedCalls are the system calls the seccomp filter refuses with EPERM:
// running a program, the escape hatches (other processes' memory, mounts,
// namespaces, kernel programs and keys, io_uring, which bypasses the
// filter), listening, and the calls that change files by path. Sockets and
// connect stay: this helper's job is to connect (through the dialer that
// checks every address); socket itself is limited to IPv4 and IPv6 below.
var refusedCalls = []string{
	"execve", "execveat",
	"bind", "listen", "accept", "accept4", "socketpair",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
	"mount", "umount2", "fsopen", "fsmount", "fsconfig", "move_mount", "open_tree", "mount_setattr",
	"unshare", "setns", "chroot", "pivot_root",
	"bpf", "keyctl", "add_key", "request_key", "perf_event_open", "userfaultfd", "fanotify_init",
	"openat2", "creat", "open_by_handle_at", "name_to_handle_at", "uselib",
	"unlink", "unlinkat", "rmdir", "rename", "renameat", "renameat2", "mkdir", "mkdirat",
	"link", "linkat", "symlink", "symlinkat", "mknod", "mknodat", "truncate",
	"chmod", "fchmodat", "fchmodat2", "chown", "lchown", "fchownat",
	"setxattr", "lsetxattr", "removexattr", "lremovexattr",
}

// writeFlags are the open flags that write: an open with any of them is refused.
const writeFlags = unix.O_WRONLY | unix.O_RDWR | unix.O_CREAT | unix.O_TRUNC | unix.O_APPEND

// raiseWalls puts up the walls on every thread of the process: Landlock
// where the kernel has it, no_new_privs, and the seccomp filter. Without
// seccomp there is no fetch.
func raiseWalls() (walls, error) {
	var w walls
	// Landlock first: it needs no_new_privs, which it sets on every thread,
	// and its own system calls, which the seccomp filter leaves alone.
	if abi, err := llsys.LandlockGetABIVersion(); err == nil && abi > 0 {
		cfg := landlock.Config{
			HandledAccessFS:  landlock.V11.HandledAccessFS,
			HandledAccessNet: llsys.AccessNetBindTCP,
			Scoped:           landlock.V11.Scoped,
		}
		rules := []landlock.Rule{
			landlock.ROFiles(readableFiles...).IgnoreIfMissing(),
			landlock.RODirs(readableDirs...).IgnoreIfMissing(),
		}
		if err := cfg.BestEffort().Restrict(rules...); err != nil {
			return w, fmt.Errorf("the kernel refused the Landlock ruleset (ABI %d): %v", abi, err)
		}
		w.Landlock = min(abi, 11)
		w.LandlockNet = abi >= 4
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	info, err := arch.GetInfo("")
	if err != nil {
		return w, fmt.Errorf("no seccomp filter for this architecture (%s): %v; nothing is fetched", runtime.GOARCH, err)
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
			Syscalls: []seccomp.SyscallGroup{
				{Names: names, Action: seccomp.ActionErrno},
			},
		},
	}
	if err := seccomp.LoadFilter(filter); err != nil {
		return w, fmt.Errorf("the kernel refused the seccomp filter (%v); nothing is fetched without it", err)
	}
	if err := refuseByArguments(info); err != nil {
		return w, fmt.Errorf("the kernel refused the seccomp filter of sockets and opens (%v); nothing is fetched without it", err)
	}
	if err := refuseOtherArches(uint32(info.ID)); err != nil {
		return w, fmt.Errorf("the kernel refused the seccomp filter of other architectures (%v); nothing is fetched without it", err)
	}
	w.NoNewPrivs = noNewPrivs()
	w.Seccomp = true
	return w, nil
}

// refuseByArguments stacks a filter refusing by the calls' arguments: a
// socket of any family but IPv4 and IPv6 (a Unix socket to a daemon,
// netlink), and an open for writing (Landlock refuses it too, where the
// kernel has it). Written by hand: go-seccomp-bpf v1.6.0 compares the next
// call's number with the argument it loaded for the previous one.
func refuseByArguments(info *arch.Info) error {
	const (
		nrOffset  = 0
		argOffset = 16 // seccomp_data.args[0], 8 bytes each; the low half first on little-endian
	)
	low := func(arg uint32) uint32 {
		off := argOffset + 8*arg
		if !littleEndian() {
			off += 4
		}
		return off
	}
	deny := bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)}
	allow := bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW}
	var prog []bpf.Instruction
	if nr, ok := info.SyscallNames["socket"]; ok {
		prog = append(prog,
			bpf.LoadAbsolute{Off: nrOffset, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(nr), SkipTrue: 5},
			bpf.LoadAbsolute{Off: low(0), Size: 4},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_INET, SkipTrue: 2},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AF_INET6, SkipTrue: 1},
			deny,
			allow,
		)
	}
	for _, call := range []struct {
		name  string
		flags uint32
	}{{"open", 1}, {"openat", 2}} {
		nr, ok := info.SyscallNames[call.name]
		if !ok {
			continue
		}
		prog = append(prog,
			bpf.LoadAbsolute{Off: nrOffset, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(nr), SkipTrue: 4},
			bpf.LoadAbsolute{Off: low(call.flags), Size: 4},
			bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: writeFlags, SkipTrue: 1},
			allow,
			deny,
		)
	}
	return loadFilter(append(prog, allow))
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// refuseOtherArches stacks a second filter refusing every system call made
// with another architecture's numbers (int 0x80 on amd64): the first filter
// knows only the native numbers.
func refuseOtherArches(native uint32) error {
	return loadFilter([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: native, SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
	})
}

// loadFilter stacks one more seccomp filter on every thread.
func loadFilter(instructions []bpf.Instruction) error {
	prog, err := bpf.Assemble(instructions)
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

// watch ends the process when the fetch takes longer than timeout or its
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
				fail(exitMemory, "the fetch needed more than %d MiB of memory (the fetch helper's limit): a repository or artifact that unpacks to more than that does this", limit>>20)
			}
			if time.Now().After(deadline) {
				fail(exitTime, "the fetch took longer than %s (the fetch time limit)", timeout)
			}
		}
	}()
	return deadline
}

// reserve is the runtime's own memory (stacks, metadata) beside the heap the fetch may use.
const reserve = 16 << 20
