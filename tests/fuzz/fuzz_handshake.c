/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer over the local transport's handshake
 * (daemon/local/transport_local.c, included so its static handlers can be
 * driven one event at a time):
 * the input is one message a client sends on guest.sock plus a plan of
 * the fds it attaches.  Byte 0 picks how many fds (0..9), byte 1 their
 * kinds (two bits each: a memfd of the right size or not, sealed or not,
 * an eventfd, a pipe); the rest is the message (a hello when it is 128
 * bytes).  tmemd accepts it, answers or refuses, then the client hangs
 * up.  After each input every fd tmemd took must be closed again and no
 * client may be left: a crash, a sanitizer report or an fd left over is
 * a bug.  make fuzz-handshake; make check replays tests/fuzz/corpus/.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../daemon/local/transport_local.c"

static struct local_state *st;
static struct tmemd_loop *loop;
static char dir[] = "/tmp/fuzz-handshake.XXXXXX";

static bool on_signal(int signo, void *data)
{
	(void)signo;
	(void)data;
	return true;
}

/* The socket and its dir go at exit; the rest stays reachable (and
 * so is no leak) through st. */
static void remove_dir(void)
{
	unlink(st->path);
	rmdir(dir);
}

static void init_once(void)
{
	static struct tmemd_config cfg;
	struct tmem_store_config sc = { .arena_bytes = 1u << 20 };
	struct tmem_policy_config pc;
	struct tmem_store *store;
	struct tmem_policy *policy;
	struct tmemd_env env = { .runtime_dir = dir, .cfg = &cfg };
	void *state;

	tmemd_log_level = TMEMD_LOG_ERR; /* every refusal would log a line */
	tmemd_config_init(&cfg);
	if (!mkdtemp(dir) || tmemd_loop_create(on_signal, NULL, &loop) ||
	    store_create(&sc, &store))
		abort();
	tmem_policy_config_defaults(&pc);
	if (tmem_policy_create(store, &pc, &policy) ||
	    tmemd_clients_create(store, policy, &cfg, &env.clients) ||
	    tmemd_workers_create(1, &env.workers))
		abort();
	env.loop = loop;
	if (local_start(&env, &state))
		abort();
	st = state;
	atexit(remove_dir);
}

static int open_fds(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		abort();
	while ((de = readdir(d)))
		n++;
	closedir(d);
	return n;
}

/* Line 0 of a fresh ring as the hello announces it, if it can. */
static void write_header(int fd, const struct tmem_local_hello *h, uint64_t size)
{
	struct tmem_ring_hdr *r;

	if (!h || tmem_ring_geometry_check(h->nr_entries, h->nr_slots) ||
	    tmem_slot_offset(h->nr_entries) > size)
		return;
	r = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r == MAP_FAILED)
		abort();
	*r = (struct tmem_ring_hdr){ .magic = TMEM_RING_MAGIC, .version = TMEM_RING_VERSION,
				     .nr_entries = h->nr_entries, .nr_slots = h->nr_slots,
				     .slot_offset = tmem_slot_offset(h->nr_entries) };
	munmap(r, size);
}

/* One fd of the given kind (0..3) for the region of hello h (NULL: the
 * message is no hello) of size bytes. */
static int make_fd(unsigned kind, const struct tmem_local_hello *h, uint64_t size)
{
	int fd, p[2];

	switch (kind) {
	case 0: /* the right memfd, with its header, sealed */
	case 1: /* unsealed, and a page short */
		fd = memfd_create("fuzz", MFD_ALLOW_SEALING | MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, (off_t)(kind ? size - 4096 : size)))
			abort();
		if (!kind) {
			write_header(fd, h, size);
			if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK))
				abort();
		}
		return fd;
	case 2:
		return eventfd(0, EFD_CLOEXEC);
	default:
		if (pipe2(p, O_CLOEXEC))
			abort();
		close(p[1]);
		return p[0];
	}
}

static int client_send(const uint8_t *msg, size_t len, unsigned nfds, uint8_t kinds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 9)];
		struct cmsghdr align;
	} ctl;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct tmem_local_hello h;
	bool is_hello = len == sizeof(h);
	uint64_t size = 0;
	int fds[9], sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (is_hello) {
		memcpy(&h, msg, sizeof(h));
		size = h.region_size;
	}
	if (size < 8192 || size > (4u << 20))
		size = tmem_region_size(8, 4);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", st->path);
	if (sock < 0 || connect(sock, (struct sockaddr *)&sa, sizeof(sa)))
		abort();
	for (unsigned i = 0; i < nfds; i++)
		fds[i] = make_fd((kinds >> (2 * (i % 4))) & 3, is_hello ? &h : NULL, size);
	if (nfds) {
		struct cmsghdr *cm;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	(void)sendmsg(sock, &mh, MSG_NOSIGNAL);
	for (unsigned i = 0; i < nfds; i++)
		close(fds[i]);
	return sock;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int before, sock;

	if (!st)
		init_once();
	if (size < 2)
		return 0;
	before = open_fds();
	sock = client_send(data + 2, size - 2, data[0] % 10, data[1]);
	st->listen_w.fn(&st->listen_w, EPOLLIN);            /* accept */
	if (st->conns)
		st->conns->w.fn(&st->conns->w, EPOLLIN);    /* the message */
	close(sock);
	if (st->conns)
		st->conns->w.fn(&st->conns->w, EPOLLIN | EPOLLHUP); /* the hang-up */
	if (st->conns || st->nr_conns || st->uids)
		abort(); /* a connection outlived its client */
	if (open_fds() != before)
		abort(); /* tmemd kept an fd the client sent, or one of its own */
	return 0;
}
