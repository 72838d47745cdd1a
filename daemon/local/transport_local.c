/* SPDX-License-Identifier: MIT */
/*
 * The local transport: guests are processes on this host that connect
 * to <runtime>/guest.sock (SOCK_SEQPACKET) and attach a ring with the
 * handshake in proto/tmem_local.h.  The client creates the memfd and the
 * kick eventfd and passes them with SCM_RIGHTS; tmemd checks them (a shmem
 * file, F_SEAL_SHRINK so the client cannot truncate the mapping under
 * us, then its size, that the doorbells really are eventfds), maps the
 * region and hands
 * the ring to a worker.  After the handshake the socket only signals
 * liveness: EOF, hang-up or any further message disconnects.
 *
 * Everything here runs on the main thread, except ops->fault, notify and
 * ack, which the serving worker calls.  A fault only shuts the socket
 * down; the main thread then sees the hang-up and tears down as for any
 * disconnect, so teardown has one path and one thread.
 *
 * An unattached connection costs tmemd a socket and memory and gives
 * nothing back, so it is bounded: the hello must come within
 * HANDSHAKE_MS of the accept (one timerfd, armed for the earliest
 * deadline, sweeps the late ones), and one uid may have only so many
 * connections still in the handshake; past that its new connections are
 * closed at once.  One uid may also attach only so many clients and
 * hold only so many pools (local_uids.h).  All connections together are
 * bounded by what RLIMIT_NOFILE leaves (FDS_PER_CONN each, after
 * FDS_RESERVED), at most MAX_CONNS; if accept() still runs out of fds,
 * guest.sock is not watched for a pause (accept_pause.h).
 *
 * A hello whose session token has nothing here may be a client that
 * migrated from another host: its pages are pulled from the
 * migrate-peers on a thread (pull_job.h) while the connection waits,
 * its welcome not sent yet and its handshake deadline lifted (it still
 * counts as one of its uid's handshakes); the pull's end wakes pull_w,
 * and the attach goes on with what came.  One pull per name at a time:
 * another hello for that name meanwhile is refused with EBUSY, which
 * libtmem tries again.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "accept_pause.h"
#include "local/local_uids.h"
#include "local/session.h"
#include "log.h"
#include "pull_job.h"
#include "tmem_local.h"
#include "transport.h"

#define MAX_CONNS 1024
#define HANDSHAKE_MS 5000
/* A connection holds its socket, memfd and kick eventfd. */
#define FDS_PER_CONN 3u
/* Descriptors kept for everything else: the loop, the workers (two
 * each), the control server and its connections (64 at most), xen
 * and a margin. */
#define FDS_RESERVED 128u

struct local_state;

struct local_conn {
	struct local_state *st;
	struct tmemd_watch w;       /* the socket */
	struct tmemd_ring ring;
	struct tmemd_client *client;
	int memfd, kick_fd;
	void *region;
	size_t region_size;
	bool attached;              /* ring handed to a worker */
	struct tmemd_session session;
	uid_t uid;                  /* the peer's, at connect */
	struct local_uid *owner;    /* what uid holds; counts this connection */
	uint64_t deadline_ns;       /* CLOCK_MONOTONIC: hello due by then */
	struct tmemd_pull_job *pull; /* its pages coming from a peer */
	struct tmem_local_hello hello; /* kept while they come */
	struct local_conn *next;
};

/* A pull whose connection went: its pages stay detached here, for the
 * client's next attach to claim. */
struct local_orphan {
	struct tmemd_pull_job *pull;
	uid_t uid;                  /* its connection's: the log line is limited per uid */
	struct local_orphan *next;
};

struct local_state {
	struct tmemd_env env;
	struct tmemd_watch listen_w;
	struct tmemd_watch timer_w; /* handshake deadlines (timerfd) */
	struct tmemd_watch pause_w; /* accept back-off (accept_pause.h) */
	struct tmemd_watch pull_w;  /* eventfd: a pull ended */
	struct local_orphan *orphans;
	struct tmemd_accept_pause pause;
	struct tmemd_log_limit refusals; /* "refusing a local connection" lines */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct local_conn *conns;
	unsigned nr_conns;
	unsigned max_conns;         /* from RLIMIT_NOFILE, at most MAX_CONNS */
	struct local_uid *uids;     /* every uid with a connection */
};

/* A log line about an attached connection's client (CLIENT=, DOMID=):
 * the client can cause it, so it is rate-limited per line and client. */
#define log_conn(level, c, ...) \
	tmemd_log_client_limited(level, (c)->client->name, (c)->client->domid, -1, \
				 __VA_ARGS__)
/* A line about a connection not attached yet: limited per line and uid. */
#define log_uid(level, uid, ...) tmemd_log_limited(level, TMEMD_RL_UID(uid), __VA_ARGS__)

static void orphan_pull(struct local_state *st, struct tmemd_pull_job *j, uid_t uid)
{
	struct local_orphan *o = malloc(sizeof(*o));

	tmemd_pull_job_stop(j);
	if (!o) {
		tmemd_pull_job_end(j, NULL); /* waits: rather that than a leak */
		return;
	}
	o->pull = j;
	o->uid = uid;
	o->next = st->orphans;
	st->orphans = o;
}

/* Frees the orphans whose pull ended (all, waiting, with wait). */
static void reap_orphans(struct local_state *st, bool wait)
{
	struct local_orphan **pp = &st->orphans;
	char name[TMEM_CLIENT_NAME_MAX];
	int rc;

	while (*pp) {
		struct local_orphan *o = *pp;

		if (!wait && !tmemd_pull_job_done(o->pull)) {
			pp = &o->next;
			continue;
		}
		*pp = o->next;
		snprintf(name, sizeof(name), "%s", tmemd_pull_job_name(o->pull));
		rc = tmemd_pull_job_end(o->pull, NULL);
		if (rc != -ENOENT)
			log_uid(TMEMD_LOG_INFO, o->uid, "local client %s: gone before its pages %s",
				name, rc ? "could be taken from a peer" : "came from a peer; they "
				"wait for its next attach");
		free(o);
	}
}

static void conn_free(struct local_conn *c)
{
	struct local_state *st = c->st;

	tmemd_loop_del(st->env.loop, &c->w);
	if (c->pull)
		orphan_pull(st, c->pull, c->uid);
	if (c->attached)
		tmemd_workers_detach(st->env.workers, &c->ring);
	if (c->client) {
		log_conn(TMEMD_LOG_INFO, c, "client %s disconnected after %llu requests",
			 c->client->name, (unsigned long long)c->ring.requests);
		/* Its pools go with it: give them back to the uid. */
		__atomic_sub_fetch(&c->owner->pools.used,
				   (unsigned)__builtin_popcount(c->client->owned_pools),
				   __ATOMIC_RELAXED);
	}
	tmemd_client_remove(c->client);
	if (c->region)
		munmap(c->region, c->region_size);
	if (c->memfd >= 0)
		close(c->memfd);
	if (c->kick_fd >= 0)
		close(c->kick_fd);
	close(c->w.fd);
	for (struct local_conn **pp = &st->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	st->nr_conns--;
	c->owner->conns--;
	if (!c->attached)
		c->owner->pending--;
	local_uid_put(&st->uids, c->owner);
	free(c);
}

/* ---- ring ops: called by the serving worker ---- */

/*
 * The doorbell to the client is a one-byte message on our own end of its
 * socket, sent with MSG_DONTWAIT: the client cannot change that file
 * description's flags (it holds only the other end) and the flag is per
 * call anyway, so nothing it does can make this block.  EAGAIN means its
 * queue is full of doorbells it has not read: one is pending anyway.
 */
static void local_notify(struct tmemd_ring *ring)
{
	struct local_conn *c = ring->priv;
	static const uint8_t bell = 1;

	if (send(c->w.fd, &bell, sizeof(bell), MSG_DONTWAIT | MSG_NOSIGNAL) < 0 &&
	    errno != EAGAIN)
		log_conn(TMEMD_LOG_DEBUG, c, "client %s: doorbell: %m", c->client->name);
}

static void local_fault(struct tmemd_ring *ring, const char *reason)
{
	struct local_conn *c = ring->priv;

	log_conn(TMEMD_LOG_WARNING, c, "client %s: %s; disconnecting it",
		 c->client->name, reason);
	shutdown(c->w.fd, SHUT_RDWR);
}

/* No .ack: the kick eventfd's open file description is the client's
 * too, which may clear O_NONBLOCK on it and drain it, so a read could
 * block the worker for good.  The worker never reads it and watches it
 * edge-triggered instead (workers.c). */
static const struct tmemd_ring_ops local_ring_ops = {
	.notify = local_notify,
	.fault = local_fault,
};

/* ---- handshake ---- */

static bool is_eventfd(int fd)
{
	char link[64], proc[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	return !strcmp(link, "anon_inode:[eventfd]");
}

/* Whether the first n bytes received are not a hello of this handshake
 * version: too short to say, another magic or another version. */
static bool hello_version_wrong(const struct tmem_local_hello *h, ssize_t n)
{
	return n < (ssize_t)(offsetof(struct tmem_local_hello, version) + sizeof(h->version)) ||
	       h->magic != TMEM_LOCAL_MAGIC || h->version != TMEM_LOCAL_VERSION;
}

static int32_t check_hello(const struct tmem_local_hello *h)
{
	if (h->magic != TMEM_LOCAL_MAGIC || h->version != TMEM_LOCAL_VERSION ||
	    h->ring_version != TMEM_RING_VERSION)
		return -TMEM_EPROTO;
	if (h->rsvd0 || memchr(h->name, '\0', sizeof(h->name)) == NULL)
		return -TMEM_EINVAL;
	for (unsigned i = 0; i < sizeof(h->rsvd) / sizeof(h->rsvd[0]); i++)
		if (h->rsvd[i])
			return -TMEM_EINVAL;
	if (tmem_ring_geometry_check(h->nr_entries, h->nr_slots) ||
	    h->region_size != tmem_region_size(h->nr_entries, h->nr_slots))
		return -TMEM_EINVAL;
	if (tmemd_check_client_name((const char *)h->name))
		return -TMEM_EINVAL;
	return 0;
}

/*
 * The memfd must be plain shmem: a hugetlbfs file can lose a page to a
 * hole punch after we map it and then not be backed again (SIGBUS on
 * our next read), and other file systems have no seals.  Seals are
 * checked before the size: once F_SEAL_SHRINK is on, the size we read
 * can only grow; checked the other way round, the client could shrink
 * then seal in between.
 */
static int32_t check_fds(struct local_conn *c, uint64_t size)
{
	struct statfs fs;
	struct stat sb;
	int seals;

	if (fstatfs(c->memfd, &fs) || fs.f_type != TMPFS_MAGIC)
		return -TMEM_EINVAL;
	seals = fcntl(c->memfd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return -TMEM_EPERM;
	if (fstat(c->memfd, &sb) || !S_ISREG(sb.st_mode) ||
	    (uint64_t)sb.st_size != size)
		return -TMEM_EINVAL;
	/* Only polled, never read or written: its flags do not matter. */
	if (!is_eventfd(c->kick_fd))
		return -TMEM_EINVAL;
	return 0;
}

/* Takes the fds out of the message into c (conn_free closes them); any
 * beyond two are closed.  Every path that received a message calls it,
 * a zero-length one and a truncated one (MSG_CTRUNC) included, so no
 * fd a client sent outlives its connection. */
static int take_fds(struct msghdr *msg, struct local_conn *c)
{
	int fds[TMEM_LOCAL_NR_FDS], n = 0;

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		int *p = (int *)CMSG_DATA(cm);
		size_t k;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			if (n < (int)TMEM_LOCAL_NR_FDS)
				fds[n] = p[i];
			else
				close(p[i]);
			n++;
		}
	}
	if (n > 0)
		c->memfd = fds[0];
	if (n > 1)
		c->kick_fd = fds[1];
	return n == (int)TMEM_LOCAL_NR_FDS && !(msg->msg_flags & MSG_CTRUNC)
		       ? 0 : -TMEM_EINVAL;
}

static int32_t attach_ring(struct local_conn *c, const struct tmem_local_hello *h);

/* Whether name's pages are being pulled for a connection here (or one
 * that went). */
static bool name_pulling(const struct local_state *st, const char *name)
{
	for (const struct local_conn *c = st->conns; c; c = c->next)
		if (c->pull && !strcmp(tmemd_pull_job_name(c->pull), name))
			return true;
	for (const struct local_orphan *o = st->orphans; o; o = o->next)
		if (!strcmp(tmemd_pull_job_name(o->pull), name))
			return true;
	return false;
}

/* 1: the hello waits for its pages from a peer (pull_ended()); -errno. */
static int32_t pull_start(struct local_conn *c, const struct tmem_local_hello *h)
{
	struct local_state *st = c->st;
	struct tmem_ident id;
	int rc;

	if (name_pulling(st, (const char *)h->name))
		return -TMEM_EBUSY;
	tmemd_session_ident(h->session, &id);
	/* Asked once: libtmem asks again, with a new hello, as it sees fit. */
	rc = tmemd_pull_job_start(st->env.clients, (const char *)h->name, &id, 0,
				  st->pull_w.fd, &c->pull);
	if (rc) {
		log_uid(TMEMD_LOG_ERR, c->uid, "local client %s: cannot start taking its pages "
			"from a peer: %s", (const char *)h->name, strerror(-rc));
		return rc;
	}
	c->hello = *h;
	return 1;
}

static int32_t attach(struct local_conn *c, const struct tmem_local_hello *h)
{
	struct local_state *st = c->st;
	struct local_limits lim;
	int32_t rc = check_fds(c, h->region_size);
	void *region;

	if (rc)
		return rc;
	region = mmap(NULL, h->region_size, PROT_READ | PROT_WRITE,
		      MAP_SHARED, c->memfd, 0);
	if (region == MAP_FAILED)
		return -TMEM_ENOMEM;
	c->region = region;
	c->region_size = h->region_size;
	rc = tmemd_ring_check_fresh(region, h->nr_entries, h->nr_slots);
	if (rc)
		return rc;
	local_limits_get(st->env.cfg, &lim);
	if (c->owner->conns - c->owner->pending >= lim.clients) {
		log_uid(TMEMD_LOG_WARNING, c->uid,
			"local client %s (uid %u) refused: its uid has %u clients attached "
			"(local-max-clients-per-uid)", (const char *)h->name,
			 (unsigned)c->uid, lim.clients);
		return -TMEM_EUSERS;
	}
	rc = tmemd_session_attach(st->env.clients, (const char *)h->name, h->session, false,
				  &c->session, &c->client);
	if (rc == 1)
		return pull_start(c, h);
	if (rc)
		return rc;
	return attach_ring(c, h);
}

/* The session's client takes the ring; a worker serves it. */
static int32_t attach_ring(struct local_conn *c, const struct tmem_local_hello *h)
{
	struct local_state *st = c->st;
	struct local_limits lim;
	int32_t rc;

	local_limits_get(st->env.cfg, &lim);
	/* The limit in force now applies to all the uid's clients. */
	__atomic_store_n(&c->owner->pools.max, lim.pools, __ATOMIC_RELAXED);
	c->client->pool_budget = &c->owner->pools;
	c->ring.geo = (struct tmemd_slots){ .region = c->region,
					    .nr_entries = h->nr_entries,
					    .nr_slots = h->nr_slots };
	c->ring.client = c->client;
	c->ring.ops = &local_ring_ops;
	c->ring.priv = c;
	c->ring.kick_fd = c->kick_fd;
	tmemd_ring_init(&c->ring);
	log_conn(TMEMD_LOG_INFO, c, "client %s %s: %u entries, %u slots",
		 c->client->name, c->session.resumed ? "reattached, its pools back" : "attached",
		 h->nr_entries, h->nr_slots);
	rc = tmemd_workers_attach(st->env.workers, &c->ring);
	if (rc)
		return rc;
	c->attached = true;
	c->owner->pending--;
	return 0;
}

static void send_welcome(struct local_conn *c, int32_t status)
{
	struct tmem_local_welcome wel = {
		.magic = TMEM_LOCAL_MAGIC,
		.version = TMEM_LOCAL_VERSION,
		.status = status,
		.client_id = c->client ? store_client_id(c->client->sc) : 0,
		.flags = c->session.resumed ? TMEM_LOCAL_RESUMED : 0,
		.pools = c->session.pools,
	};

	if (status == 0)
		memcpy(wel.session, c->session.token, sizeof(wel.session));

	/* Non-blocking and a fresh socket: a full buffer means a client
	 * that does not read; it is dropped below anyway on failure. */
	if (send(c->w.fd, &wel, sizeof(wel), MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    (ssize_t)sizeof(wel))
		log_uid(TMEMD_LOG_DEBUG, c->uid, "client: welcome not sent: %m");
}

/* The welcome, and a refused connection closed. */
static void end_handshake(struct local_conn *c, int32_t rc)
{
	send_welcome(c, rc);
	if (rc) {
		tmemd_clients_count_refusal(c->st->env.clients, TMEMD_REFUSED_HANDSHAKE, rc);
		log_uid(TMEMD_LOG_NOTICE, c->uid, "local client (uid %u) refused at handshake: %s",
			(unsigned)c->uid, strerror(-rc));
		conn_free(c);
	}
}

static void on_hello(struct local_conn *c)
{
	union {
		struct tmem_local_hello h;
		uint8_t raw[sizeof(struct tmem_local_hello) + 1];
	} buf;
	union {
		char buf[CMSG_SPACE(sizeof(int) * 8)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = &buf, .iov_len = sizeof(buf) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	ssize_t n = recvmsg(c->w.fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	int32_t rc;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	/* A zero-length message may carry fds too; EOF has none. */
	rc = n >= 0 ? take_fds(&msg, c) : -TMEM_EINVAL;
	if (n <= 0) {
		conn_free(c);
		return;
	}
	/* The handshake version before anything else, the descriptors
	 * included: a client of another version (version 1 sent three) is
	 * told -EPROTO, as tmemd(8) says, whatever else it sent. */
	if (hello_version_wrong(&buf.h, n))
		rc = -TMEM_EPROTO;
	else if (!rc && (n != (ssize_t)sizeof(buf.h) || (msg.msg_flags & MSG_TRUNC)))
		rc = -TMEM_EPROTO;
	if (!rc)
		rc = check_hello(&buf.h);
	if (!rc)
		rc = attach(c, &buf.h);
	if (rc != 1)
		end_handshake(c, rc);
}

/* c's pull ended: it attaches with what came, or as a new client. */
static void pull_ended(struct local_conn *c)
{
	struct local_state *st = c->st;
	uint64_t waited_ms;
	int32_t rc = tmemd_pull_job_end(c->pull, &waited_ms);

	c->pull = NULL;
	if (rc && rc != -ENOENT)
		log_uid(TMEMD_LOG_WARNING, c->uid, "local client %s: its pages could not be taken "
			"from a peer (%s after %llu ms)", (const char *)c->hello.name, strerror(-rc),
			(unsigned long long)waited_ms);
	/* The region is the client's meanwhile too: still as a hello has it? */
	rc = tmemd_ring_check_fresh(c->region, c->hello.nr_entries, c->hello.nr_slots);
	if (!rc)
		rc = tmemd_session_attach(st->env.clients, (const char *)c->hello.name,
					  c->hello.session, true, &c->session, &c->client);
	if (!rc)
		rc = attach_ring(c, &c->hello);
	end_handshake(c, rc);
}

static void on_pull_ended(struct tmemd_watch *w, uint32_t events)
{
	struct local_state *st = w->data;
	struct local_conn *c, *next;
	uint64_t n;

	(void)events;
	if (read(w->fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_debug("pull eventfd: %m");
	for (c = st->conns; c; c = next) {
		next = c->next;
		if (c->pull && tmemd_pull_job_done(c->pull))
			pull_ended(c);
	}
	reap_orphans(st, false);
}

static bool is_park(const char *msg)
{
	struct tmem_local_op op;

	memcpy(&op, msg, sizeof(op));
	return op.magic == TMEM_LOCAL_MAGIC && op.op == TMEM_LOCAL_OP_PARK && !op.status &&
	       !op.rsvd;
}

/* The client asked to be parked for a migration: its pools stay for a
 * peer (daemon/migrate/), and conn_free() finds no client to free. */
static void park(struct local_conn *c)
{
	struct tmem_local_op answer = { .magic = TMEM_LOCAL_MAGIC, .op = TMEM_LOCAL_OP_PARK };
	struct tmemd_client *cl = c->client;
	int rc;

	if (c->attached) {
		tmemd_workers_detach(c->st->env.workers, &c->ring);
		c->attached = false;
		c->owner->pending++; /* conn_free() takes it back off */
	}
	__atomic_sub_fetch(&c->owner->pools.used, (unsigned)__builtin_popcount(cl->owned_pools),
			   __ATOMIC_RELAXED);
	c->client = NULL;
	rc = tmemd_clients_park_for_peer(cl);
	if (rc && rc != -ENOENT)
		tmemd_log(TMEMD_LOG_WARNING, "local client asked to be parked: %s; its pages are freed",
			  strerror(-rc));
	/* The answer says it is done; a close alone would mean we died. */
	answer.status = rc;
	if (send(c->w.fd, &answer, sizeof(answer), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		tmemd_log(TMEMD_LOG_INFO, "local client gone before its park was answered");
}

static void on_conn(struct tmemd_watch *w, uint32_t events)
{
	struct local_conn *c = w->data;
	char junk[256];

	if (c->pull) {	/* gone, or talking out of turn, before its welcome */
		conn_free(c);
		return;
	}
	if (!c->attached && !(events & (EPOLLHUP | EPOLLERR))) {
		on_hello(c);
		return;
	}
	if (c->attached && (events & EPOLLIN)) {
		ssize_t n = recv(w->fd, junk, sizeof(junk), MSG_DONTWAIT);

		if (n == (ssize_t)sizeof(struct tmem_local_op) && is_park(junk)) {
			park(c);
		} else if (n > 0) {
			log_conn(TMEMD_LOG_WARNING, c,
				 "client %s: message after the handshake; disconnecting it",
				 c->client->name);
		}
	}
	conn_free(c);
}

/* ---- handshake deadline and per-uid cap ---- */

/* Arms the timer for the earliest handshake deadline, or disarms it.
 * A deadline of a connection that attached or went meanwhile only makes
 * a sweep that finds nothing. */
static void arm_handshake_timer(struct local_state *st)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	uint64_t first = 0;

	for (struct local_conn *c = st->conns; c; c = c->next)
		if (!c->attached && !c->pull && (!first || c->deadline_ns < first))
			first = c->deadline_ns;
	its.it_value.tv_sec = (time_t)(first / 1000000000u);
	its.it_value.tv_nsec = (long)(first % 1000000000u);
	if (timerfd_settime(st->timer_w.fd, TFD_TIMER_ABSTIME, &its, NULL))
		log_err("handshake timer: %m; idle connections are not timed out");
}

static void on_handshake_timer(struct tmemd_watch *w, uint32_t events)
{
	struct local_state *st = w->data;
	uint64_t expirations, now = tmemd_now_ns();
	struct local_conn *c, *next;

	(void)events;
	if (read(w->fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		log_debug("handshake timer: %m");
	for (c = st->conns; c; c = next) {
		next = c->next;
		if (c->attached || c->pull || c->deadline_ns > now)
			continue;
		tmemd_clients_count_refusal(st->env.clients, TMEMD_REFUSED_HANDSHAKE,
					    TMEMD_REASON_TIMEOUT);
		log_uid(TMEMD_LOG_NOTICE, c->uid,
			"local connection (uid %u) sent no handshake within %d ms; closing it",
			(unsigned)c->uid, HANDSHAKE_MS);
		conn_free(c);
	}
	arm_handshake_timer(st);
}

/* The peer's uid, or (uid_t)-1 when the kernel does not say. */
static uid_t peer_uid(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ? (uid_t)-1 : cred.uid;
}

/* Why a new connection from u's uid must be refused, or NULL. */
static const char *over_limit(const struct local_state *st, const struct local_uid *u)
{
	struct local_limits lim;

	local_limits_get(st->env.cfg, &lim);
	if (st->nr_conns >= st->max_conns)
		return "too many connections";
	if (u->pending >= lim.handshakes)
		return "too many handshakes under way for its uid (local-max-handshakes-per-uid)";
	return NULL;
}

static int handshake_timer_start(struct local_state *st)
{
	int rc;

	st->timer_w = (struct tmemd_watch){ .fn = on_handshake_timer, .data = st,
					    .fd = timerfd_create(CLOCK_MONOTONIC,
								 TFD_NONBLOCK | TFD_CLOEXEC) };
	if (st->timer_w.fd < 0) {
		rc = -errno;
		log_err("handshake timer: %s", strerror(-rc));
		return rc;
	}
	rc = tmemd_loop_add(st->env.loop, &st->timer_w, EPOLLIN);
	if (rc) {
		log_err("handshake timer: cannot watch: %s", strerror(-rc));
		close(st->timer_w.fd);
		st->timer_w.fd = -1;
	}
	return rc;
}

/* Out of fds or memory: stop watching guest.sock for a while
 * (accept_pause.h), or the level-triggered listener spins. */
static void pause_accepting(struct local_state *st, int err)
{
	unsigned not_logged = 0;
	bool report = tmemd_accept_pause_start(&st->pause, &not_logged);

	if (st->pause.paused)
		tmemd_loop_del(st->env.loop, &st->listen_w);
	if (report)
		log_warn("%s: accept: %s; not accepting for %u ms (%u such failures not logged)",
			 st->path, strerror(err), st->pause.delay_ms, not_logged);
}

static void on_accept_resume(struct tmemd_watch *w, uint32_t events)
{
	struct local_state *st = w->data;
	int rc;

	(void)events;
	tmemd_accept_pause_end(&st->pause);
	rc = tmemd_loop_add(st->env.loop, &st->listen_w, EPOLLIN);
	if (rc)
		log_err("%s: cannot watch it again: %s; no new local clients",
			st->path, strerror(-rc));
}

/* Each connection holds FDS_PER_CONN descriptors: past RLIMIT_NOFILE
 * accept() fails, and with it every other client and control.sock. */
static unsigned conn_limit(void)
{
	struct rlimit rl;
	rlim_t n;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return MAX_CONNS;
	n = rl.rlim_cur > FDS_RESERVED + FDS_PER_CONN ?
	    (rl.rlim_cur - FDS_RESERVED) / FDS_PER_CONN : 1;
	return n < MAX_CONNS ? (unsigned)n : MAX_CONNS;
}

static int accept_pause_start(struct local_state *st)
{
	int rc = tmemd_accept_pause_init(&st->pause);

	if (!rc) {
		st->pause_w = (struct tmemd_watch){ .fd = st->pause.timer_fd,
						    .fn = on_accept_resume, .data = st };
		rc = tmemd_loop_add(st->env.loop, &st->pause_w, EPOLLIN);
		if (rc)
			st->pause_w.fd = -1;
	}
	if (rc)
		log_err("accept back-off timer: %s", strerror(-rc));
	return rc;
}

static void on_accept(struct tmemd_watch *w, uint32_t events)
{
	struct local_state *st = w->data;
	struct local_conn *c = NULL;
	struct local_uid *owner;
	const char *why;
	uid_t uid;
	int fd;

	(void)events;
	fd = accept4(w->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		if (tmemd_accept_exhausted(errno))
			pause_accepting(st, errno);
		return;
	}
	tmemd_accept_ok(&st->pause);
	uid = peer_uid(fd);
	owner = local_uid_get(&st->uids, uid);
	why = owner ? over_limit(st, owner) : "out of memory";
	if (!why && !(c = calloc(1, sizeof(*c))))
		why = "out of memory";
	if (why) {
		unsigned not_logged;

		tmemd_clients_count_refusal(st->env.clients, TMEMD_REFUSED_HANDSHAKE,
					    TMEMD_REASON_LIMIT);
		if (tmemd_log_limit_ok(&st->refusals, &not_logged))
			log_warn("refusing a local connection (uid %u): %s (%u more refusals "
				 "not logged)", (unsigned)uid, why, not_logged);
		local_uid_put(&st->uids, owner);
		close(fd);
		return;
	}
	c->st = st;
	c->uid = uid;
	c->owner = owner;
	owner->conns++;
	owner->pending++;
	c->deadline_ns = tmemd_now_ns() + HANDSHAKE_MS * 1000000ull;
	c->memfd = c->kick_fd = -1;
	c->w = (struct tmemd_watch){ .fd = fd, .fn = on_conn, .data = c };
	c->next = st->conns;
	st->conns = c;
	st->nr_conns++;
	if (tmemd_loop_add(st->env.loop, &c->w, EPOLLIN | EPOLLRDHUP))
		conn_free(c);
	else
		arm_handshake_timer(st);
}

/* ---- listening socket ---- */

/* A live tmemd already answering at path?  Then do not steal it. */
static bool socket_in_use(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	bool used;

	if (fd < 0)
		return false;
	used = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
	close(fd);
	return used;
}

static int listen_on(struct local_state *st)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/guest.sock",
		     st->env.runtime_dir) >= (int)sizeof(sa.sun_path)) {
		log_err("runtime dir too long for a socket path: %s", st->env.runtime_dir);
		return -ENAMETOOLONG;
	}
	if (socket_in_use(&sa)) {
		log_err("%s: another tmemd is serving it", sa.sun_path);
		return -EADDRINUSE;
	}
	unlink(sa.sun_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    chmod(sa.sun_path, 0660) || listen(fd, 64)) {
		int rc = -errno;

		log_err("%s: cannot listen: %s", sa.sun_path, strerror(-rc));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	snprintf(st->path, sizeof(st->path), "%s", sa.sun_path);
	st->listen_w = (struct tmemd_watch){ .fd = fd, .fn = on_accept, .data = st };
	return 0;
}

static int pull_watch_start(struct local_state *st)
{
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), rc;

	if (fd < 0) {
		rc = -errno;
		log_err("local transport: eventfd: %s", strerror(-rc));
		return rc;
	}
	st->pull_w = (struct tmemd_watch){ .fd = fd, .fn = on_pull_ended, .data = st };
	rc = tmemd_loop_add(st->env.loop, &st->pull_w, EPOLLIN);
	if (rc) {
		log_err("local transport: cannot watch its eventfd: %s", strerror(-rc));
		close(fd);
		st->pull_w.fd = -1;
	}
	return rc;
}

static void local_stop(void *state)
{
	struct local_state *st = state;

	if (!st)
		return;
	while (st->conns)
		conn_free(st->conns);
	reap_orphans(st, true);
	if (st->pull_w.fd >= 0) {
		tmemd_loop_del(st->env.loop, &st->pull_w);
		close(st->pull_w.fd);
	}
	if (st->timer_w.fd >= 0) {
		tmemd_loop_del(st->env.loop, &st->timer_w);
		close(st->timer_w.fd);
	}
	if (st->listen_w.fd >= 0) {
		tmemd_loop_del(st->env.loop, &st->listen_w);
		close(st->listen_w.fd);
		unlink(st->path);
	}
	if (st->pause_w.fd >= 0)
		tmemd_loop_del(st->env.loop, &st->pause_w);
	tmemd_accept_pause_fini(&st->pause);
	free(st);
}

static int local_start(const struct tmemd_env *env, void **state)
{
	struct local_state *st = calloc(1, sizeof(*st));
	int rc;

	if (!st)
		return -ENOMEM;
	st->env = *env;
	st->listen_w.fd = st->timer_w.fd = st->pause_w.fd = st->pause.timer_fd = -1;
	st->pull_w.fd = -1;
	st->max_conns = conn_limit();
	rc = handshake_timer_start(st); /* logs its own failures */
	if (!rc)
		rc = pull_watch_start(st);
	if (!rc)
		rc = accept_pause_start(st);
	if (!rc)
		rc = listen_on(st);
	if (!rc) {
		rc = tmemd_loop_add(env->loop, &st->listen_w, EPOLLIN);
		if (rc)
			log_err("%s: cannot watch: %s", st->path, strerror(-rc));
	}
	if (rc) {
		local_stop(st);
		return rc;
	}
	log_info("local transport listening on %s (at most %u connections)",
		 st->path, st->max_conns);
	*state = st;
	return 0;
}

static bool local_usable(void)
{
	return true;
}

const struct tmem_transport_ops tmemd_transport_local = {
	.name = "local",
	.usable = local_usable,
	.start = local_start,
	.stop = local_stop,
};
