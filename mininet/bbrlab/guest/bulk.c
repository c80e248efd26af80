/* Bulk TCP sender and receiver: the flows' two ends, as few system calls as the transfer allows.
 *
 *     bulk receive PORT
 *     bulk send HOST PORT SECONDS CC
 *
 * What a bulk-transfer experiment needs from its traffic tool is a sender that
 * keeps its socket buffer full for a set time with a chosen congestion control,
 * and a receiver that reads everything as soon as it arrives. On User-Mode Linux
 * each guest system call is a ptrace stop of a host process and each page the
 * process touches for the first time is a fault handled the same way, so the
 * tool is made of as few of both as it can be:
 *
 *   - The receiver calls recv() on a 128-KiB buffer (iperf3's default block)
 *     with MSG_WAITALL. The call sleeps in the kernel and, each time the socket
 *     becomes readable (when iperf3's select() woke), copies all that is
 *     queued, as iperf3's reads do, and runs the step a read ends with,
 *     tcp_cleanup_rbuf (the window-update and delayed ACKs), before it sleeps
 *     again (tcp_recvmsg_locked). So the kernel sees the same reads at the same
 *     moments and sends the same ACKs, but the process returns to user space
 *     only when the block is full, at the end of stream or on a signal. On
 *     User-Mode Linux a task that sleeps and wakes inside the kernel costs the
 *     host nothing extra; each return to user space is a ptrace stop. iperf3's
 *     server ran a whole select() loop per arriving segment (5 stops), 94 % of
 *     a run's host cost (bench/results/host-cost-2026-11-23.md); a recv()
 *     per wake-up made one stop per segment (receiver-2026-11-23.md), one per
 *     block makes about 90 times fewer (receiver-waitall-2026-11-24.md).
 *     With MSG_TRUNC the data is consumed without being copied to the buffer
 *     (tcp_recvmsg_locked skips only skb_copy_datagram_msg: the sequence
 *     advances, tcp_rcv_space_adjust and tcp_cleanup_rbuf run as before), so
 *     the kernel's side of every read is the same and the return value counts
 *     the same bytes; what goes is the copy, which User-Mode Linux makes page
 *     by page through the guest's page tables. The payload is never looked
 *     at: a bulk transfer's bytes are all alike
 *     (bench/results/receiver-trunc-2026-11-29.md).
 *   - It is a small static C program, not a Python script: starting Python in
 *     the guest costs about one host CPU-second (a thousand page faults and the
 *     interpreter's start-up), once per flow end per run
 *     (bench/results/bulk-binary-<date>.md measures the two).
 *
 * The sender sets TCP_CONGESTION before connecting (as `iperf3 -C` does), writes
 * 128-KiB blocks from a blocking socket until SECONDS have passed since the
 * connection was established, then closes it; what is still buffered is sent,
 * as with iperf3. A write blocked on a full buffer must return at the deadline,
 * so that a slow flow does not overrun it: each write carries a send timeout
 * (SO_SNDTIMEO) of the time left, but at most SLICE_S, and a write that timed
 * out with nothing written is made again until the deadline. The cap is what
 * keeps the deadline to within a fraction of a second. The timeout is a timer
 * of the kernel's timer wheel, whose expiry is rounded up to its level's
 * granularity, about 1/8 of the
 * timeout (8^k jiffies for a timeout under 64 x 8^k): one blocking write with
 * 500 s left ends up to 41 s late at HZ 100 (the testbed kernel's), one with
 * 3000 s left up to 5.5 minutes late. A writer sleeps until its buffer is a third
 * empty (sk_stream_write_space), which for a flow getting a few Mbit/s over
 * round trips of seconds can take minutes, so long runs met exactly that: the
 * senders of BBR flows starved by CUBIC in 6000-s runs ended more than 30 s
 * after the run (the driver's grace) and the runs failed. A slice of 10 s is
 * 1000 jiffies at HZ 100 (the wheel's third level: at most 0.64 s late), 0.26 s
 * at HZ 250 and 0.51 s at HZ 1000. Re-entering the write changes nothing the
 * flow sees (the buffer stays as full; a write wakes on the same condition),
 * and a write that blocks for less than the slice is exactly what it was
 * before the cap, so a run in which no write blocked for 10 s repeats, byte
 * for byte, what the sender without the cap made of it; a run in which one did
 * takes another path, as any change of the guest's timing would
 * (bench/results/revision-seeds-2026-11-26-sender-slice*.md). The report
 * gives the longest single write ("longest_write_s") and how late the sender
 * stopped ("overrun_s").
 *
 * There is no control connection: the run's schedule, not a protocol, says
 * when each end starts. The receiver prints {"listening": PORT} once it
 * listens; each end prints one JSON line when it finishes (bytes, times, the
 * congestion control the socket actually used), which the experiment keeps in
 * raw/ as a cross-check (docs/tidy-data.md). A receiver stopped by SIGTERM before
 * the sender's end of stream (the experiment's end comes while a slow flow still
 * drains its send buffer) reports what it received with "eof": false. Exit
 * status: 0 done, 1 a socket error (named on stderr), 2 a malformed command line.
 *
 * Built by bbrlab/host/guest_programs.py (static, into build/bin/) before a testbed
 * starts; the guest runs the host's binary through its host file system.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (128 * 1024)
#define SLICE_S 10.0 /* the longest a write may block: see the header */
#define CC_LEN 16
#define USAGE "usage: bulk receive PORT | bulk send HOST PORT SECONDS CC"

static char block[BLOCK];
/* SIGTERM: the receiver reports what it has and ends. The handler also shuts the socket
   the receiver waits on for reading, so that a wait the signal missed (it came just
   before the call) returns too. */
static volatile sig_atomic_t stopped;
static volatile sig_atomic_t waiting_fd = -1;

static void on_term(int sig)
{
    (void)sig;
    stopped = 1;
    if (waiting_fd >= 0)
        shutdown(waiting_fd, SHUT_RD);
}

static void fail(const char* what)
{
    fprintf(stderr, "bulk: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void usage(const char* why)
{
    if (why)
        fprintf(stderr, "bulk: %s\n", why);
    fprintf(stderr, "%s\n", USAGE);
    exit(2);
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int parse_port(const char* text)
{
    char* end;
    long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < 1 || v > 65535)
        usage("PORT must be an integer from 1 to 65535");
    return (int)v;
}

static void used_cc(int fd, char* cc)
{
    socklen_t len = CC_LEN;
    memset(cc, 0, CC_LEN + 1);
    if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &len) < 0)
        fail("getsockopt TCP_CONGESTION");
}

static int receive(int port)
{
    int one = 1;
    int lst = socket(AF_INET, SOCK_STREAM, 0);
    if (lst < 0)
        fail("socket");
    if (setsockopt(lst, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
        fail("setsockopt SO_REUSEADDR");
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = INADDR_ANY};
    if (bind(lst, (struct sockaddr*)&addr, sizeof addr) < 0)
        fail("bind");
    if (listen(lst, 1) < 0)
        fail("listen");
    printf("{\"listening\": %d}\n", port);
    fflush(stdout);

    struct sockaddr_in peer;
    socklen_t plen = sizeof peer;
    int conn;
    waiting_fd = lst;
    while (stopped || (conn = accept(lst, (struct sockaddr*)&peer, &plen)) < 0)
    {
        if (stopped)
        {
            printf("{\"role\": \"receiver\", \"port\": %d, \"bytes\": 0, \"reads\": 0, \"eof\": false}\n", port);
            return 0;
        }
        if (errno != EINTR)
            fail("accept");
    }
    waiting_fd = conn;
    close(lst);
    double start = wall_now();
    unsigned long long received = 0, reads = 0;
    int eof = 0;
    while (!stopped)
    {
        ssize_t n = recv(conn, block, BLOCK, MSG_WAITALL | MSG_TRUNC);
        if (n < 0)
        {
            if (errno == EINTR)
                continue;
            fail("recv");
        }
        if (n == 0)
        {
            eof = !stopped; /* not the end of stream: our own shutdown on SIGTERM */
            break;
        }
        received += (unsigned long long)n;
        reads++;
    }
    waiting_fd = -1;
    double end = wall_now();
    char cc[CC_LEN + 1];
    used_cc(conn, cc);
    close(conn);
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &peer.sin_addr, ip, sizeof ip);
    printf("{\"role\": \"receiver\", \"port\": %d, \"peer\": \"%s:%d\", \"bytes\": %llu, \"reads\": %llu, "
           "\"start\": %.6f, \"end\": %.6f, \"cc\": \"%s\", \"eof\": %s}\n",
           port, ip, ntohs(peer.sin_port), received, reads, start, end, cc, eof ? "true" : "false");
    return 0;
}

static int send_for(const char* host, int port, double seconds, const char* cc)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        fail("socket");
    if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, strlen(cc)) < 0)
    {
        fprintf(stderr, "bulk send: congestion control '%s' is not available: %s\n", cc, strerror(errno));
        return 1;
    }
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1)
        usage("HOST must be an IPv4 address");
    while (connect(fd, (struct sockaddr*)&addr, sizeof addr) < 0)
        if (errno != EINTR)
            fail("connect");
    double start = wall_now();
    double deadline = mono_now() + seconds;
    double longest = 0, last = -1;
    unsigned long long sent = 0;
    /* One clock read per write and none after the last, as before the cap (each read is a
       system call on User-Mode Linux, and one more would change the run's path): a write's
       time is the time from its iteration's read to the next one's (to the end, for the last). */
    for (;;)
    {
        double now = mono_now();
        if (last >= 0 && now - last > longest)
            longest = now - last;
        last = now;
        double left = deadline - now;
        if (left <= 0)
            break;
        /* a write blocked on a full buffer returns (what it wrote, or EAGAIN) after the slice */
        double slice = left < SLICE_S ? left : SLICE_S;
        long usec = (long)((slice - (long)slice) * 1e6);
        struct timeval tv = {.tv_sec = (long)slice, .tv_usec = usec < 1 ? 1 : usec};
        if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0)
            fail("setsockopt SO_SNDTIMEO");
        ssize_t n = send(fd, block, BLOCK, 0);
        if (n < 0)
        {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
            {
                if (slice < left)
                    continue; /* the slice ended, not the time: write again */
                break;
            }
            fail("send");
        }
        sent += (unsigned long long)n;
    }
    double end = wall_now();
    /* the wall and the monotonic clock, read a few us apart at the start, tell the rest */
    double overrun = end - start - seconds;
    double last_write = end - start - (last - (deadline - seconds));
    if (last_write > longest)
        longest = last_write;
    char used[CC_LEN + 1];
    used_cc(fd, used);
    close(fd);
    printf("{\"role\": \"sender\", \"port\": %d, \"peer\": \"%s:%d\", \"bytes\": %llu, "
           "\"start\": %.6f, \"end\": %.6f, \"cc\": \"%s\", \"longest_write_s\": %.6f, \"overrun_s\": %.6f}\n",
           port, host, port, sent, start, end, used, longest, overrun);
    return 0;
}

int main(int argc, char** argv)
{
    signal(SIGPIPE, SIG_IGN); /* a reset peer is an error return (EPIPE), named, not a silent death */
    struct sigaction term = {.sa_handler = on_term}; /* no SA_RESTART: a blocked recv() returns */
    sigaction(SIGTERM, &term, NULL);
    if (argc == 3 && strcmp(argv[1], "receive") == 0)
        return receive(parse_port(argv[2]));
    if (argc == 6 && strcmp(argv[1], "send") == 0)
    {
        char* end;
        double seconds = strtod(argv[4], &end);
        if (*argv[4] == '\0' || *end != '\0')
            usage("SECONDS must be a number");
        if (!(seconds > 0))
            usage("SECONDS must be positive");
        return send_for(argv[2], parse_port(argv[3]), seconds, argv[5]);
    }
    usage(NULL);
    return 2;
}
