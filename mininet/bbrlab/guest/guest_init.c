/* PID 1 of the User-Mode Linux testbed guest.
 *
 * The host's root file system is the guest's root (hostfs, read-only); this
 * program gives the guest private writable directories (tmpfs), mounts the run
 * directory of the host read-write at /mnt/run and the whole host root again,
 * read-only, at /mnt/host (so host paths under the directories that tmpfs
 * hides, such as /tmp, stay reachable), runs the experiment (python3 -m
 * bbrlab.guest) and powers the guest off. Its exit status reaches the host
 * through /mnt/run/guest_exit. Arguments come from the kernel command line as
 * environment variables: BBRLAB_RUN (host path of the run directory) and
 * BBRLAB_PYTHONPATH (host path holding the bbrlab package), and in a seeded run
 * BBRLAB_PYTHONHASHSEED (from the run's seed, backends/uml.py), which fixes the
 * hash seed of every Python process of the guest.
 *
 * Why a C program and not a shell script (as until 2026-11-24): in the guest
 * every process started costs the host a large number of ptrace stops (each
 * page it touches first, each system call), and the script started some twenty
 * (mount, mkdir, grep, ln, hostname, ip, uname) and a Python interpreter at the
 * end only to call reboot(2). Here each step is the system call the command
 * would have made, and the only process started is the experiment's driver
 * (bench/results/revision-ab-2026-11-24-init-*.md measures the two).
 *
 * Built with the flows' two ends by guest_programs.py (static, into build/bin/).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

static void warn(const char* what, const char* path)
{
    fprintf(stderr, "bbrlab-guest: init: %s %s: %s\n", what, path, strerror(errno));
}

static void mnt(const char* source, const char* target, const char* type, unsigned long flags, const char* data)
{
    if (mount(source, target, type, flags, data) < 0)
        warn("cannot mount", target);
}

static void mkdirs(const char* path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char* p = buf + 1; *p; p++)
        if (*p == '/')
        {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    if (mkdir(buf, 0755) < 0 && errno != EEXIST)
        warn("cannot create", path);
}

static int mounted(const char* target, const char* type)
{
    char want[256], line[1024];
    snprintf(want, sizeof want, " %s %s ", target, type);
    FILE* f = fopen("/proc/mounts", "r");
    if (!f)
        return 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, want) != NULL;
    fclose(f);
    return found;
}

static void loopback_up(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    strcpy(ifr.ifr_name, "lo");
    if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
        warn("cannot read the flags of", "lo");
    ifr.ifr_flags |= IFF_UP;
    if (fd >= 0 && ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
        warn("cannot bring up", "lo");
    if (fd >= 0)
        close(fd);
}

static void set_up(void)
{
    static const char* const tmpfs_dirs[] = {"/tmp", "/run", "/var/tmp", "/var/log", "/var/lib/openvswitch",
                                             "/etc/openvswitch", "/mnt"};
    static const char* const dirs[] = {"/run/openvswitch", "/var/log/openvswitch", "/mnt/run", "/mnt/host",
                                       "/run/netns"};
    struct stat st;
    mnt("proc", "/proc", "proc", 0, NULL);
    mnt("sysfs", "/sys", "sysfs", 0, NULL);
    if (!mounted("/dev", "devtmpfs"))
        mnt("devtmpfs", "/dev", "devtmpfs", 0, NULL);
    mkdirs("/dev/pts");
    mkdirs("/dev/shm");
    mnt("devpts", "/dev/pts", "devpts", 0, "newinstance,ptmxmode=0666");
    if (lstat("/dev/ptmx", &st) < 0 && symlink("pts/ptmx", "/dev/ptmx") < 0)
        warn("cannot link", "/dev/ptmx");
    mnt("tmpfs", "/dev/shm", "tmpfs", 0, NULL);
    for (size_t i = 0; i < sizeof tmpfs_dirs / sizeof *tmpfs_dirs; i++)
        mnt("tmpfs", tmpfs_dirs[i], "tmpfs", 0, "mode=1777");
    if (lstat("/var/run", &st) < 0 || !S_ISLNK(st.st_mode))
        mnt("tmpfs", "/var/run", "tmpfs", 0, NULL);
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        mkdirs(dirs[i]);
    const char* run = getenv("BBRLAB_RUN");
    mnt("hostfs", "/mnt/run", "hostfs", 0, run ? run : "");
    mnt("hostfs", "/mnt/host", "hostfs", MS_RDONLY, "/");
    if (sethostname("testbed", 7) < 0)
        warn("cannot set", "the host name");
    loopback_up();
}

static void set_environment(void)
{
    setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 1);
    setenv("HOME", "/tmp", 1);
    setenv("LANG", "C.UTF-8", 1);
    /* Mininet's node.py imports distutils.version. With Debian's python3-setuptools
       installed, its distutils-precedence.pth hands that import to setuptools, which
       then imports setuptools.dist, pkg_resources and pyparsing: 4.1 of the 6.1 s the
       driver's imports took in the guest (real clock, bench/setup_profile.py). The
       standard library's distutils (python3-distutils) has the same StrictVersion. */
    setenv("SETUPTOOLS_USE_DISTUTILS", "stdlib", 1);
    const char* seed = getenv("BBRLAB_PYTHONHASHSEED");
    if (seed && *seed)
        setenv("PYTHONHASHSEED", seed, 1);
    const char* package = getenv("BBRLAB_PYTHONPATH");
    char path[4096];
    snprintf(path, sizeof path, "/mnt/host%s", package ? package : "");
    setenv("PYTHONPATH", path, 1);
    setenv("BBRLAB_HOST_ROOT", "/mnt/host", 1);
}

static int run_driver(void)
{
    pid_t pid = fork();
    if (pid < 0)
    {
        warn("cannot fork", "the experiment driver");
        return 127;
    }
    if (pid == 0)
    {
        execl("/usr/bin/python3", "python3", "-m", "bbrlab.guest", "/mnt/run", (char*)NULL);
        warn("cannot run", "/usr/bin/python3");
        _exit(127);
    }
    /* PID 1 also reaps the orphans the experiment leaves; the driver's status is the run's */
    for (;;)
    {
        int status;
        pid_t done = wait(&status);
        if (done == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (done < 0 && errno != EINTR)
            return 127;
    }
}

static void write_exit(int rc)
{
    char text[16];
    int n = snprintf(text, sizeof text, "%d\n", rc);
    int fd = open("/mnt/run/guest_exit.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, text, n) != n || close(fd) < 0 ||
        rename("/mnt/run/guest_exit.tmp", "/mnt/run/guest_exit") < 0)
        warn("cannot write", "/mnt/run/guest_exit");
}

int main(void)
{
    set_environment();
    set_up();
    struct utsname u;
    uname(&u);
    printf("bbrlab-guest: booted, kernel %s\n", u.release);
    fflush(stdout);
    int rc = run_driver();
    write_exit(rc);
    printf("bbrlab-guest: experiment exited with status %d\n", rc);
    fflush(stdout);
    sync();
    reboot(RB_POWER_OFF);
    warn("cannot power off", "the guest");
    return rc;
}
