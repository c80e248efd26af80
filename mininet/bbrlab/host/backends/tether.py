"""Tie a testbed to the process that launched it: when the launcher dies, the testbed dies.

    python3 -S tether.py FD [--rmtree DIR] [--after CMD] -- COMMAND ARG...

The launcher (runner.py, through a backend) keeps the write end of a pipe
and hands the read end to this process as FD. The tether starts COMMAND in
a session and process group of its own (User-Mode Linux would put itself in
a new session anyway; its helper and guest-userspace processes live in that
group) and waits for whichever comes first:

  - COMMAND exits: whatever it left in its group is killed, the tether exits
    with its status;
  - the pipe reaches end of file, i.e. the launcher is gone however it died
    (SIGKILL included: the kernel closes a dead process's descriptors), or
    the launcher writes "k" to it (its timeout): the whole group is killed;
  - the tether gets SIGTERM, SIGINT or SIGHUP (a job kill of the launcher's
    process group, Ctrl-C in a terminal): the whole group is killed.

After the group is gone the tether removes DIR (the testbed's scratch
directory) and runs CMD (e.g. a network cleanup for the native backend).
COMMAND also gets the parent-death signal SIGKILL, so it dies even if the
tether itself is SIGKILLed. Standard library only and no package imports:
it runs with `python3 -S` before anything else is loaded.
"""
import ctypes
import os
import select
import shutil
import signal
import subprocess
import sys

PR_SET_PDEATHSIG = 1


def usage() -> None:
    """Print the usage line to stderr and exit with status 2 (never returns)."""
    sys.stderr.write("usage: tether.py FD [--rmtree DIR] [--after CMD] -- COMMAND ARG...\n")
    sys.exit(2)


def parse(argv):
    """(FD, DIR or None, CMD or None, COMMAND as a list) from the tether's argv (argv[0] included);
    anything else, an option without its value or an empty side of `--`, exits with the usage."""
    if len(argv) < 3 or "--" not in argv:
        usage()
    split = argv.index("--")
    opts, command = argv[1:split], argv[split + 1:]
    if not command or not opts:
        usage()
    fd, rmtree, after = int(opts[0]), None, None
    rest = opts[1:]
    while rest:
        if rest[0] == "--rmtree" and len(rest) > 1:
            rmtree, rest = rest[1], rest[2:]
        elif rest[0] == "--after" and len(rest) > 1:
            after, rest = rest[1], rest[2:]
        else:
            usage()
    return fd, rmtree, after, command


def start(command, fd):
    """Fork COMMAND as a group leader that dies with its parent (this tether)."""
    tether = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(fd)
            os.setsid()                         # own session and group, no controlling terminal
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != tether:          # the tether died before prctl took effect
                os._exit(137)
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                signal.signal(sig, signal.SIG_DFL)
            os.execvp(command[0], command)
        except BaseException as err:            # noqa: BLE001 - report anything, never return to the tether's code
            try:
                os.write(2, f"tether: cannot start {command[0]}: {err}\n".encode())
            finally:
                os._exit(127)
    return pid


def main(argv) -> int:
    """The tether (module docstring) for argv (argv[0] included): start COMMAND, wait for its exit,
    the launcher's end of the pipe or a signal, kill COMMAND's process group, remove DIR, run CMD.
    Returns COMMAND's exit status (128 + N for a signal N), or 137 when the tether killed it."""
    fd, rmtree, after, command = parse(argv)
    # A signal from now on only sets a flag through the wake-up pipe below; the loop does the killing.
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: None)
    pid = start(command, fd)
    child = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(child, select.POLLIN)
    poller.register(fd, select.POLLIN | select.POLLHUP)
    poller.register(wake_r, select.POLLIN)
    reason = None
    while reason is None:
        for ready, _events in poller.poll():
            if ready == child:
                reason = "exited"
            elif ready == fd:
                data = os.read(fd, 1)
                reason = "launcher gone" if not data else "kill requested" if data == b"k" else None
            elif ready == wake_r:
                os.read(wake_r, 64)
                reason = "signalled"
            if reason:
                break
    # The leader is not reaped yet (at worst a zombie), so neither its pid nor its group id
    # can have been reused; killing it directly covers a child killed before its setsid().
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _, status = os.waitpid(pid, 0)
    if rmtree:
        shutil.rmtree(rmtree, ignore_errors=True)
    if after:
        subprocess.run(after, shell=True, stdin=subprocess.DEVNULL)
    if reason != "exited":
        sys.stderr.write(f"tether: testbed killed ({reason})\n")
        return 137
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
