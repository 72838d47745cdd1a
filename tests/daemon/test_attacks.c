/* SPDX-License-Identifier: MIT */
/*
 * The attacks of issue 19 against a real tmemd, one test each, named
 * after what they broke.  A local client (any member of guest.sock's
 * group) mounts each; tmemd must stay up, keep serving an honest client
 * and stop cleanly on SIGTERM (exit 0; under ASan that also means no
 * use-after-free and no leak).  make check runs this against the plain,
 * the ASan+UBSan and the TSan builds of tmemd.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <linux/sockios.h>
#include <time.h>
#include <unistd.h>

#include "accept_pause.h"
#include "common/test_main.h"
#include "harness.h"
#include "rawclient.h"
#include "tmem.h"

static void msleep(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* An honest client connects, stores a page and reads it back. */
static void honest_roundtrip(struct daemon *d, const char *name)
{
	static char page[4096], back[4096];
	struct tmem_oid o = { .oid = { 7, 8, 9 } };
	struct tmem_conn *c;
	int32_t pool;

	ck_assert_msg(tmem_connect(d->sock, name, &c) == 0, "%s cannot connect", name);
	pool = tmem_new_pool(c, tmem_pool_flags(TMEM_POOL_PERSIST), NULL);
	ck_assert_int_ge(pool, 0);
	test_page(page, 42);
	ck_assert_int_eq(tmem_put(c, pool, &o, 0, page), 1);
	ck_assert_int_eq(tmem_get(c, pool, &o, 0, back), 1);
	ck_assert_int_eq(memcmp(page, back, sizeof(page)), 0);
	tmem_disconnect(c);
}

/* The attack is over: tmemd is alive, serves, and stops cleanly. */
static void survived(struct daemon *d)
{
	ck_assert_msg(daemon_alive(d), "tmemd died");
	honest_roundtrip(d, "honest");
	ck_assert_int_eq(daemon_stop(d), 0);
}

/* How many fds tmemd holds open. */
static int daemon_fds(struct daemon *d)
{
	char path[64];
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)d->pid);
	dir = opendir(path);
	ck_assert_ptr_nonnull(dir);
	while (readdir(dir))
		n++;
	closedir(dir);
	return n;
}

/*
 * Item 1: the handshake timer freed a late connection whose hang-up sat
 * later in the same epoll batch, and the loop then ran that freed
 * connection's handler.  SIGSTOP holds tmemd while the deadline passes
 * and the client hangs up, so both events land in one batch, timer
 * first.
 */
START_TEST(test_uaf_hangup_after_handshake_deadline)
{
	struct daemon d;
	int fds[4];

	daemon_start(&d, NULL, "8M");
	for (int i = 0; i < 4; i++)
		fds[i] = rawc_socket(d.sock);
	msleep(200); /* accepted, deadline armed */
	ck_assert_int_eq(kill(d.pid, SIGSTOP), 0);
	msleep(5300); /* the 5 s deadline passes while tmemd is stopped */
	for (int i = 0; i < 4; i++)
		close(fds[i]);
	msleep(50);
	ck_assert_int_eq(kill(d.pid, SIGCONT), 0);
	msleep(300);
	survived(&d);
}
END_TEST

/*
 * Item 6: a zero-length message with 8 fds looked like EOF, and the
 * connection was freed without closing them.  Also a message with more
 * fds than tmemd's control buffer holds (MSG_CTRUNC).
 */
START_TEST(test_fd_leak_zero_length_message)
{
	struct daemon d;
	int ev[20], before, after;

	for (int i = 0; i < 20; i++)
		ev[i] = eventfd(0, EFD_CLOEXEC);
	daemon_start(&d, NULL, "8M");
	before = daemon_fds(&d);
	for (int round = 0; round < 40; round++) {
		int fd = rawc_socket(d.sock);
		char b;

		if (round % 2)
			ck_assert_int_eq(rawc_send_fds(fd, "", 0, ev, 8), 0);
		else /* 16 fds and a hello-sized message: truncated control */
			ck_assert_int_eq(rawc_send_fds(fd, &d, sizeof(struct tmem_local_hello), ev, 16),
					 sizeof(struct tmem_local_hello));
		/* tmemd closes the connection (after a refusal for the second kind) */
		while (recv(fd, &b, 1, 0) > 0)
			;
		close(fd);
	}
	msleep(200);
	after = daemon_fds(&d);
	ck_assert_msg(after <= before + 2, "tmemd holds %d fds, %d before the attack",
		      after, before);
	for (int i = 0; i < 20; i++)
		close(ev[i]);
	survived(&d);
}
END_TEST

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spins until tmemd has read the message sent on sock (the socket's
 * send queue empties when the peer receives it), then delay_ns more. */
static void after_peer_read(int sock, uint64_t delay_ns)
{
	uint64_t t0 = now_ns();
	int outq = 1;

	while (outq > 0 && now_ns() - t0 < 100000000u)
		if (ioctl(sock, SIOCOUTQ, &outq))
			break;
	t0 = now_ns();
	while (now_ns() - t0 < delay_ns)
		;
}

/*
 * Item 5: the client shrinks, then seals, its memfd between tmemd's size
 * check and its seal check; tmemd then maps a file shorter than the
 * region and dies of SIGBUS at the first read.  Won within 2 s before
 * the fix; 3 s of attempts here.
 */
START_TEST(test_shrink_then_seal_race)
{
	uint64_t size = tmem_region_size(8, 4), end;
	struct tmem_local_hello h;
	struct daemon d;
	unsigned seed = 1, attempts = 0;

	daemon_start(&d, NULL, "8M");
	rawc_good_hello(&h, "shrinker");
	end = now_ns() + 3000000000ull;
	while (now_ns() < end && daemon_alive(&d)) {
		int memfd = rawc_region_fd(size, false);
		int fds[3] = { memfd, eventfd(0, 0), eventfd(0, 0) };
		struct tmem_local_welcome w;
		int sock = rawc_socket(d.sock);

		seed = seed * 1103515245u + 12345u;
		ck_assert_int_eq(rawc_send_fds(sock, &h, sizeof(h), fds, 3), sizeof(h));
		after_peer_read(sock, (seed >> 8) % 20000u);
		if (ftruncate(memfd, 0) == 0)
			(void)fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK);
		(void)recv(sock, &w, sizeof(w), 0);
		close(sock);
		for (int i = 0; i < 3; i++)
			close(fds[i]);
		attempts++;
	}
	ck_assert_msg(daemon_alive(&d), "tmemd died after %u attempts", attempts);
	survived(&d);
}
END_TEST

static int huge_fd = -1; /* /proc/sys/vm/nr_hugepages, locked while the case runs */
static long saved_huge_pages = -1;

static long huge_read(void)
{
	char buf[32] = "";

	return pread(huge_fd, buf, sizeof(buf) - 1, 0) > 0 ? atol(buf) : -1;
}

static bool huge_write(long n)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%ld\n", n);

	return pwrite(huge_fd, buf, (size_t)len, 0) == len;
}

/*
 * An unchecked fixture (it runs in the parent, so the pool is put back
 * even when the test fails): one more 2 MiB huge page.  make -j2 check
 * runs this program against several tmemd builds at once, so the case
 * holds a lock on the sysctl file while it runs, and gives back one
 * page rather than writing back what it read.
 */
static void huge_setup(void)
{
	huge_fd = open("/proc/sys/vm/nr_hugepages", O_RDWR | O_CLOEXEC);
	if (huge_fd < 0 || flock(huge_fd, LOCK_EX) || (saved_huge_pages = huge_read()) < 0 ||
	    !huge_write(saved_huge_pages + 1)) {
		fprintf(stderr, "test_attacks: cannot add a huge page: %s (needs root)\n",
			strerror(errno));
		saved_huge_pages = -1;
	}
}

static void huge_teardown(void)
{
	long n = saved_huge_pages >= 0 ? huge_read() : -1;

	if (n > 0)
		huge_write(n - 1);
	if (huge_fd >= 0)
		close(huge_fd); /* drops the lock */
	huge_fd = -1;
}

static long free_huge_pages(void)
{
	char line[128];
	long n = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "HugePages_Free: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* A hugetlbfs memfd holding a fresh 8-entry, 511-slot ring (2 MiB, one
 * huge page), sealed against shrinking. */
static int huge_ring_fd(uint64_t size)
{
	int fd = memfd_create("huge-ring", MFD_HUGETLB | MFD_ALLOW_SEALING);
	struct tmem_ring_hdr *hdr;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
	hdr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(hdr, MAP_FAILED);
	*hdr = (struct tmem_ring_hdr){ .magic = TMEM_RING_MAGIC, .version = TMEM_RING_VERSION,
				       .nr_entries = 8, .nr_slots = 511,
				       .slot_offset = tmem_slot_offset(8) };
	munmap(hdr, size);
	ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	return fd;
}

/*
 * Item 4: a client attaches a hugetlbfs memfd, then punches its page out
 * and has another file take every free huge page: tmemd's next read of
 * the ring cannot be backed and raised SIGBUS.  tmemd must refuse such
 * a memfd at the handshake.
 */
START_TEST(test_hugetlbfs_memfd_refused)
{
	uint64_t size = tmem_region_size(8, 511), one = 1;
	struct tmem_local_welcome w = { 0 };
	struct tmem_local_hello h;
	struct daemon d;
	long nfree;
	int fds[3] = { huge_ring_fd(size), eventfd(0, 0), eventfd(0, 0) };
	int hog = memfd_create("huge-hog", MFD_HUGETLB), sock;
	char *p;

	ck_assert_uint_eq(size, 2u << 20);
	ck_assert_msg(saved_huge_pages >= 0, "no huge page could be reserved (needs root)");
	daemon_start(&d, NULL, "8M");
	rawc_good_hello(&h, "huge");
	h.nr_slots = 511;
	h.region_size = size;
	sock = rawc_socket(d.sock);
	ck_assert_int_eq(rawc_send_fds(sock, &h, sizeof(h), fds, 3), sizeof(h));
	ck_assert_int_eq(recv(sock, &w, sizeof(w), 0), sizeof(w));
	/* Attached or not, mount the attack. */
	ck_assert_int_eq(fallocate(fds[0], FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
				   (off_t)size), 0);
	nfree = free_huge_pages();
	ck_assert_int_eq(ftruncate(hog, (off_t)(size * (uint64_t)nfree)), 0);
	p = mmap(NULL, size * (uint64_t)nfree, PROT_READ | PROT_WRITE, MAP_SHARED, hog, 0);
	ck_assert_ptr_ne(p, MAP_FAILED);
	for (long i = 0; i < nfree; i++)
		p[(uint64_t)i * size] = 1;
	ck_assert_int_eq(write(fds[1], &one, sizeof(one)), sizeof(one));
	msleep(300);
	ck_assert_msg(daemon_alive(&d), "tmemd died (status of the hello: %d)", w.status);
	ck_assert_int_eq(w.status, -EINVAL);
	close(sock);
	munmap(p, size * (uint64_t)nfree);
	close(hog);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	survived(&d);
}
END_TEST

/* Does an honest client get through within ms?  In a child, so that a
 * hung tmemd fails the test instead of hanging it. */
static bool honest_within(struct daemon *d, const char *name, unsigned ms)
{
	pid_t pid = fork();
	int st;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		signal(SIGALRM, SIG_DFL); /* Check's handler kills the whole group */
		alarm((ms + 999) / 1000);
		honest_roundtrip(d, name);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* The attacker's own handshake, so that it holds every descriptor it
 * shares with tmemd: memfd, kick eventfd (and, before handshake v2, the
 * wake eventfd).  Returns the socket; fds[] gets the descriptors. */
static int attacker_connect(struct daemon *d, const char *name, void **region,
			    int fds[TMEM_LOCAL_NR_FDS])
{
	uint64_t size = tmem_region_size(8, 4);
	struct tmem_local_welcome w = { 0 };
	struct tmem_local_hello h;
	int sock = rawc_socket(d->sock);

	fds[0] = rawc_region_fd(size, true);
	for (unsigned i = 1; i < TMEM_LOCAL_NR_FDS; i++)
		fds[i] = eventfd(0, EFD_NONBLOCK);
	*region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	ck_assert_ptr_ne(*region, MAP_FAILED);
	rawc_good_hello(&h, name);
	ck_assert_int_eq(rawc_send_fds(sock, &h, sizeof(h), fds, TMEM_LOCAL_NR_FDS), sizeof(h));
	ck_assert_int_eq(recv(sock, &w, sizeof(w), 0), sizeof(w));
	ck_assert_int_eq(w.status, 0);
	return sock;
}

static void clear_nonblock(int fd)
{
	ck_assert_int_eq(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK), 0);
}

static volatile bool drainer_stop;

/* Blocks in read() on the kick eventfd, racing tmemd's worker for each
 * kick. */
static void *drain_kicks(void *arg)
{
	int fd = *(int *)arg;
	uint64_t v;

	while (!drainer_stop && read(fd, &v, sizeof(v)) > 0)
		;
	return NULL;
}

/* Is one of tmemd's threads inside read(2) right now?  (Its threads
 * otherwise sleep in epoll_wait; a blocked read is a stuck worker.) */
static bool daemon_thread_in_read(struct daemon *d)
{
	char path[320], line[64];
	struct dirent *de;
	bool in_read = false;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)d->pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while (!in_read && (de = readdir(dir))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/syscall", (int)d->pid, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		in_read = fgets(line, sizeof(line), f) && !strncmp(line, "0 ", 2);
		fclose(f);
	}
	closedir(dir);
	return in_read;
}

/* Checks that the attack left tmemd usable: another client, the
 * attacker's own disconnect, SIGTERM, each within a bound. */
static void still_serving(struct daemon *d, int attacker_sock)
{
	ck_assert_msg(honest_within(d, "bystander", 3000),
		      "another client was not served within 3 s");
	close(attacker_sock);
	ck_assert_msg(honest_within(d, "after-detach", 3000),
		      "tmemd did not serve after the attacker's disconnect");
	ck_assert_msg(daemon_stop(d) == 0, "tmemd did not stop cleanly on SIGTERM within 10 s");
}

/*
 * Item 2: the client clears O_NONBLOCK on its kick eventfd (the open
 * file description is shared with tmemd) and drains it from a thread
 * already blocked in read(): tmemd's worker, woken by the kick, found
 * it empty and blocked in read() for good; detach and SIGTERM then
 * waited on that worker.  One worker, so the bystander shares it.
 */
START_TEST(test_kick_eventfd_drained_blocking)
{
	int fds[TMEM_LOCAL_NR_FDS], sock;
	uint64_t one = 1;
	struct daemon d;
	pthread_t t;
	void *region;

	daemon_start(&d, "[tmemd]\nworkers = 1\n", "8M");
	sock = attacker_connect(&d, "kick-drainer", &region, fds);
	clear_nonblock(fds[1]);
	drainer_stop = false;
	ck_assert_int_eq(pthread_create(&t, NULL, drain_kicks, &fds[1]), 0);
	/* Kick until the drainer wins the race that matters: the worker's
	 * epoll saw the count, the drainer then took it before the worker's
	 * read(), which blocks.  (/proc shows it; 2 s of attempts.) */
	for (int i = 0; i < 1000 && !daemon_thread_in_read(&d); i++) {
		msleep(2); /* the worker has stopped spinning and sleeps */
		ck_assert_int_eq(write(fds[1], &one, sizeof(one)), sizeof(one));
	}
	still_serving(&d, sock);
	drainer_stop = true;
	ck_assert_int_eq(write(fds[1], &one, sizeof(one)), sizeof(one));
	pthread_join(t, NULL);
	munmap(region, tmem_region_size(8, 4));
	for (unsigned i = 0; i < TMEM_LOCAL_NR_FDS; i++)
		close(fds[i]);
}
END_TEST

/*
 * Item 3: the client saturates the doorbell tmemd rings (the wake
 * eventfd before handshake v2) and clears O_NONBLOCK, then posts
 * requests asking for a doorbell on each answer: the worker blocked in
 * write() and SIGTERM was ignored.  Since v2 tmemd rings it over the
 * socket; the attacker never reads that, so its queue fills up.
 */
START_TEST(test_wake_doorbell_saturated_blocking)
{
	int fds[TMEM_LOCAL_NR_FDS], sock;
	uint64_t full = 0xfffffffffffffffeull, one = 1;
	struct tmem_ring_hdr *h;
	union tmem_ring_entry *e;
	struct daemon d;
	void *region;

	daemon_start(&d, "[tmemd]\nworkers = 1\n", "8M");
	sock = attacker_connect(&d, "wake-saturator", &region, fds);
	for (unsigned i = 2; i < TMEM_LOCAL_NR_FDS; i++) {
		ck_assert_int_eq(write(fds[i], &full, sizeof(full)), sizeof(full));
		clear_nonblock(fds[i]);
	}
	h = region;
	e = tmem_ring_entries(region);
	for (uint32_t n = 0; n < 5000; n++) {
		uint64_t t0 = now_ns();

		rawc_req(&e[n & 7].req, TMEM_OP_FLUSH_PAGE, 12345);
		tmem_store_once(&h->rsp_event, n + 1);
		tmem_store_release(&h->req_prod, n + 1);
		ck_assert_int_eq(write(fds[1], &one, sizeof(one)), sizeof(one));
		/* one at a time, each answered (or tmemd is stuck) */
		while (tmem_load_acquire(&h->rsp_prod) != n + 1 &&
		       now_ns() - t0 < 200000000u)
			;
		if (tmem_load_acquire(&h->rsp_prod) != n + 1)
			break;
	}
	still_serving(&d, sock);
	munmap(region, tmem_region_size(8, 4));
	for (unsigned i = 0; i < TMEM_LOCAL_NR_FDS; i++)
		close(fds[i]);
}
END_TEST

/* tmemd's CPU time so far (user + system), in clock ticks. */
static unsigned long daemon_cpu_ticks(struct daemon *d)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)d->pid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	p = strrchr(buf, ')');
	ck_assert_ptr_nonnull(p);
	/* after ") ": state ppid pgrp session tty tpgid flags minflt
	 * cminflt majflt cmajflt utime stime */
	ck_assert_int_eq(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
				&ut, &st), 2);
	return ut + st;
}

static long file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) ? -1 : (long)sb.st_size;
}

/* A status request on control.sock answers. */
static bool control_answers(struct daemon *d)
{
	static const char req[] = "{\"version\":1,\"cmd\":\"status\"}\n";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pollfd p = { .events = POLLIN };
	char reply[512];
	bool ok;

	ck_assert_uint_lt(strlen(d->dir) + 14, sizeof(sa.sun_path));
	memcpy(sa.sun_path, d->dir, strlen(d->dir));
	strcat(sa.sun_path, "/control.sock");
	p.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ok = connect(p.fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	     write(p.fd, req, sizeof(req) - 1) == (ssize_t)sizeof(req) - 1 &&
	     poll(&p, 1, 3000) == 1 && read(p.fd, reply, sizeof(reply)) > 0 &&
	     !strncmp(reply, "{", 1);
	close(p.fd);
	return ok;
}

/*
 * Item 8: with RLIMIT_NOFILE at 256, a client that attaches until
 * tmemd's accept() fails with EMFILE, then leaves more connections in
 * the backlog, made the level-triggered listener spin (97% CPU) and
 * the logs grow without bound; control.sock could not accept either.
 * Now the connection limit follows RLIMIT_NOFILE and EMFILE pauses the
 * listener.
 */
START_TEST(test_fd_exhaustion_no_busy_loop)
{
	struct rlimit old, low;
	struct tmem_conn *c[80];
	int backlog[8], nc = 0;
	unsigned long t0, t1;
	long log0, log1;
	struct daemon d;

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = (struct rlimit){ .rlim_cur = 256, .rlim_max = old.rlim_max };
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0); /* tmemd inherits it */
	daemon_start(&d, NULL, "8M");
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
	for (int i = 0; i < 80; i++) {
		char name[32];

		snprintf(name, sizeof(name), "hog%d", i);
		if (tmem_connect(d.sock, name, &c[nc]) == 0)
			nc++;
	}
	for (int i = 0; i < 8; i++)
		backlog[i] = rawc_socket(d.sock);
	msleep(200);
	t0 = daemon_cpu_ticks(&d);
	log0 = file_size(d.log);
	msleep(2000);
	t1 = daemon_cpu_ticks(&d);
	log1 = file_size(d.log);
	ck_assert_msg(t1 - t0 < (unsigned long)sysconf(_SC_CLK_TCK) / 5,
		      "tmemd used %lu ticks of CPU in 2 s with %d clients attached",
		      t1 - t0, nc);
	ck_assert_msg(log1 - log0 < 4096, "tmemd logged %ld bytes in 2 s", log1 - log0);
	ck_assert_msg(control_answers(&d), "control.sock does not answer");
	for (int i = 0; i < 8; i++)
		close(backlog[i]);
	for (int i = 0; i < nc; i++)
		tmem_disconnect(c[i]);
	msleep(100);
	survived(&d);
}
END_TEST

/* In a child running as uid/gid nobody: an honest client's round trip
 * (guest.sock is opened up for it first).  True when it got through. */
static bool honest_as_nobody(struct daemon *d)
{
	pid_t pid;
	int st;

	ck_assert_int_eq(chmod(d->dir, 0755), 0);
	ck_assert_int_eq(chmod(d->sock, 0666), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		signal(SIGALRM, SIG_DFL);
		alarm(10);
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(2);
		honest_roundtrip(d, "nobody-honest");
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

struct hog {
	struct tmem_conn *c[1100];
	int nc, pools;
};

/* One uid attaches up to max clients (stopping at the first refusal)
 * and creates up to per pools in each. */
static void hog_attach(struct daemon *d, struct hog *h, int max, int per)
{
	h->nc = h->pools = 0;
	for (int i = 0; i < max; i++) {
		char name[32];

		snprintf(name, sizeof(name), "hog%d", i);
		if (tmem_connect_geometry(d->sock, name, 2, 1, &h->c[h->nc]))
			break;
		h->nc++;
	}
	for (int i = 0; i < h->nc; i++)
		for (int j = 0; j < per; j++) {
			if (tmem_new_pool(h->c[i], tmem_pool_flags(0), NULL) < 0)
				break;
			h->pools++;
		}
}

static void hog_leave(struct hog *h)
{
	for (int i = 0; i < h->nc; i++)
		tmem_disconnect(h->c[i]);
}

/*
 * Item 7: one uid attached 1021 clients (every connection tmemd took)
 * and 16,382 pools (all the store had): everyone else was locked out,
 * or got -ENOSPC from NEW_POOL.  With the default per-uid limits (64
 * clients, 512 pools) another uid still gets in and gets its pool.
 */
START_TEST(test_uid_limits_default)
{
	static struct hog h;
	struct daemon d;

	daemon_start(&d, NULL, "64M");
	hog_attach(&d, &h, 1100, 16);
	ck_assert_int_eq(h.nc, 64);
	ck_assert_int_eq(h.pools, 512);
	ck_assert_msg(honest_as_nobody(&d), "another uid was locked out (hog: %d clients, %d pools)",
		      h.nc, h.pools);
	hog_leave(&h);
	msleep(100);
	/* Its pools went with its clients: the same uid has its full budget. */
	hog_attach(&d, &h, 1, 32);
	ck_assert_int_eq(h.pools, 32);
	hog_leave(&h);
	survived(&d);
}
END_TEST

/* The same limits set in tmemd.conf. */
START_TEST(test_uid_limits_config)
{
	static struct hog h;
	struct daemon d;
	int idle[3];

	daemon_start(&d, "[tmemd]\nlocal-max-clients-per-uid = 3\n"
		     "local-max-pools-per-uid = 5\nlocal-max-handshakes-per-uid = 2\n", "16M");
	hog_attach(&d, &h, 10, 4);
	ck_assert_int_eq(h.nc, 3);
	ck_assert_int_eq(h.pools, 5);
	for (int i = 0; i < 3; i++)
		idle[i] = rawc_socket(d.sock);
	msleep(200);
	ck_assert_int_eq(recv(idle[0], &h, 1, MSG_DONTWAIT), -1); /* still open */
	ck_assert_int_eq(recv(idle[1], &h, 1, MSG_DONTWAIT), -1);
	ck_assert_int_eq(recv(idle[2], &h, 1, MSG_DONTWAIT), 0);  /* the third: closed */
	ck_assert(honest_as_nobody(&d));
	for (int i = 0; i < 3; i++)
		close(idle[i]);
	hog_leave(&h);
	survived(&d);
}
END_TEST

static volatile bool storm_stop;

static void *kick_storm(void *arg)
{
	int fd = *(int *)arg;
	uint64_t one = 1;

	while (!storm_stop)
		if (write(fd, &one, sizeof(one)) < 0)
			break;
	return NULL;
}

/*
 * Item 9: a client ringing its doorbell millions of times a second with
 * nothing on its ring woke tmemd's worker for each kick (46% of a core
 * and more).  Now its doorbell is muted while it storms: tmemd's CPU
 * stays low, its own requests are still answered (within a mute, 16 ms
 * at most), and so are another client's.  make bench-kick-storm prints
 * the other client's p99.
 */
START_TEST(test_kick_storm_bounded)
{
	struct tmem_req req;
	struct tmem_rsp rsp;
	unsigned long t0, t1;
	struct daemon d;
	struct rawc c;
	pthread_t t;
	uint64_t s0;

	daemon_start(&d, "[tmemd]\nworkers = 1\n", "8M");
	ck_assert_int_eq(rawc_connect(&c, d.sock, "stormer"), 0);
	storm_stop = false;
	ck_assert_int_eq(pthread_create(&t, NULL, kick_storm, &c.ring.kick_fd), 0);
	msleep(300);
	t0 = daemon_cpu_ticks(&d);
	msleep(2000);
	t1 = daemon_cpu_ticks(&d);
	ck_assert_msg(t1 - t0 < (unsigned long)sysconf(_SC_CLK_TCK) * 2 / 4,
		      "tmemd used %lu ticks of CPU in 2 s of kicks", t1 - t0);
	s0 = now_ns();
	rawc_req(&req, TMEM_OP_FLUSH_PAGE, 5);
	ck_assert_int_eq(rawc_call(&c, &req, &rsp), 0);
	ck_assert_int_eq(rsp.ret, -TMEM_ENOENT);
	ck_assert_msg(now_ns() - s0 < 500000000u, "the stormer waited %llu ms for an answer",
		      (unsigned long long)((now_ns() - s0) / 1000000u));
	ck_assert_msg(honest_within(&d, "bystander", 3000), "another client was not served");
	storm_stop = true;
	pthread_join(t, NULL);
	tmem_raw_disconnect(&c.ring);
	survived(&d);
}
END_TEST

/*
 * Item 11: all digits and "domid:N" spell Xen domain ids (tmemctl's
 * CLIENT, the state file's keys and shared-pool principals).  A local
 * client called "4242" kept storing after "tmemctl freeze 4242" froze
 * domain 4242, and one called "domid:5" joined pools authorised for
 * domain 5.  No client may take such a name now, nor (issue 25) one
 * starting "uuid:", which names a domain by its handle.
 */
START_TEST(test_local_client_cannot_take_domid_name)
{
	static const char *const names[] = { "4242", "domid:5", "domid:x", "0",
					     "uuid:00112233-4455-6677-8899-aabbccddeeff",
					     "uuid:x" };
	struct tmem_conn *c;
	struct daemon d;

	daemon_start(&d, NULL, "8M");
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct tmem_local_hello h;
		int fds[3] = { rawc_region_fd(tmem_region_size(8, 4), true),
			       eventfd(0, 0), eventfd(0, 0) };

		ck_assert_msg(tmem_connect(d.sock, names[i], &c) < 0,
			      "a local client attached as \"%s\"", names[i]);
		rawc_good_hello(&h, names[i]);
		ck_assert_int_eq(rawc_hello(d.sock, &h, fds, TMEM_LOCAL_NR_FDS), -EINVAL);
		for (int j = 0; j < 3; j++)
			close(fds[j]);
	}
	ck_assert_int_eq(tmem_connect(d.sock, "dom5", &c), 0); /* names like it are fine */
	tmem_disconnect(c);
	survived(&d);
}
END_TEST

/* Item 8, the logs: each refused connection logged a line, so a client
 * connecting in a loop filled the journal.  At most one line per 10 s. */
START_TEST(test_refusal_log_rate_limited)
{
	struct daemon d;
	long log0, log1;
	int idle;

	daemon_start(&d, "[tmemd]\nlocal-max-handshakes-per-uid = 1\n", "8M");
	idle = rawc_socket(d.sock);
	msleep(100);
	log0 = file_size(d.log);
	for (int i = 0; i < 2000; i++)
		close(rawc_socket(d.sock)); /* each over the limit: refused */
	msleep(200);
	log1 = file_size(d.log);
	ck_assert_msg(log1 - log0 < 1024, "2000 refusals logged %ld bytes", log1 - log0);
	close(idle);
	survived(&d);
}
END_TEST

/*
 * Item 8's back-off itself (daemon/accept_pause.h), which the listeners
 * use when accept() still fails with EMFILE: pauses double from 50 ms
 * to 1.6 s, the timer says when to listen again, a success resets them,
 * and the failures are logged once per 10 s with a count.
 */
START_TEST(test_accept_pause_backoff)
{
	struct tmemd_accept_pause p;
	struct pollfd pfd = { .events = POLLIN };
	unsigned not_logged = 99, want = TMEMD_ACCEPT_PAUSE_MIN_MS;
	uint64_t t0;

	ck_assert(tmemd_accept_exhausted(EMFILE) && tmemd_accept_exhausted(ENFILE));
	ck_assert(!tmemd_accept_exhausted(EAGAIN));
	ck_assert_int_eq(tmemd_accept_pause_init(&p), 0);
	pfd.fd = p.timer_fd;
	t0 = now_ns();
	ck_assert(tmemd_accept_pause_start(&p, &not_logged)); /* first: logged */
	ck_assert_uint_eq(not_logged, 0);
	ck_assert(p.paused);
	ck_assert_uint_eq(p.delay_ms, TMEMD_ACCEPT_PAUSE_MIN_MS);
	ck_assert_int_eq(poll(&pfd, 1, 1000), 1);
	ck_assert_uint_ge(now_ns() - t0, TMEMD_ACCEPT_PAUSE_MIN_MS * 1000000ull - 1000000);
	tmemd_accept_pause_end(&p);
	ck_assert(!p.paused);
	for (int i = 0; i < 8; i++) {
		want = want * 2 > TMEMD_ACCEPT_PAUSE_MAX_MS ? TMEMD_ACCEPT_PAUSE_MAX_MS : want * 2;
		ck_assert(!tmemd_accept_pause_start(&p, &not_logged)); /* within 10 s */
		ck_assert_uint_eq(p.delay_ms, want);
		tmemd_accept_pause_end(&p);
	}
	ck_assert_uint_eq(p.log.not_logged, 8);
	tmemd_accept_ok(&p);
	ck_assert(!tmemd_accept_pause_start(&p, &not_logged));
	ck_assert_uint_eq(p.delay_ms, TMEMD_ACCEPT_PAUSE_MIN_MS);
	p.log.next_ns = 0; /* as if 10 s had passed */
	ck_assert(tmemd_accept_pause_start(&p, &not_logged));
	ck_assert_uint_eq(not_logged, 9);
	tmemd_accept_pause_fini(&p);
	ck_assert_int_eq(p.timer_fd, -1);
}
END_TEST

static Suite *attacks_suite(void)
{
	Suite *s = suite_create("tmemd-attacks");
	TCase *tc = tcase_create("attacks"), *huge = NULL;

	tcase_set_timeout(tc, 60);
	/* Reserving a huge page writes /proc/sys/vm/nr_hugepages. */
	if (tmem_test_have_root("test_hugetlbfs_memfd_refused", "adds a huge page")) {
		huge = tcase_create("hugetlbfs");
		tcase_set_timeout(huge, 60);
		tcase_add_unchecked_fixture(huge, huge_setup, huge_teardown);
		tcase_add_test(huge, test_hugetlbfs_memfd_refused);
	}
	tcase_add_test(tc, test_uaf_hangup_after_handshake_deadline);
	tcase_add_test(tc, test_fd_leak_zero_length_message);
	tcase_add_test(tc, test_shrink_then_seal_race);
	tcase_add_test(tc, test_kick_eventfd_drained_blocking);
	tcase_add_test(tc, test_wake_doorbell_saturated_blocking);
	tcase_add_test(tc, test_fd_exhaustion_no_busy_loop);
	tcase_add_test(tc, test_uid_limits_default);
	tcase_add_test(tc, test_uid_limits_config);
	tcase_add_test(tc, test_kick_storm_bounded);
	tcase_add_test(tc, test_local_client_cannot_take_domid_name);
	tcase_add_test(tc, test_refusal_log_rate_limited);
	tcase_add_test(tc, test_accept_pause_backoff);
	suite_add_tcase(s, tc);
	if (huge)
		suite_add_tcase(s, huge);
	return s;
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	return tmem_test_main(attacks_suite(), 0);
}
