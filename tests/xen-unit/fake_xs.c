/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fake_xs.h"

#define MAX_PERMS 4
#define MAX_EVENTS 4096

struct node {
	char *path;
	char *value;
	struct tmemd_xs_perm perms[MAX_PERMS];
	unsigned nr_perms;
	struct node *next;
};

struct watch {
	char *path;
	char *token;
	struct watch *next;
};

struct event {
	char path[TMEMD_XS_PATH_MAX];
	char token[TMEMD_XS_TOKEN_MAX];
};

struct fake_xs {
	struct node *nodes;
	struct watch *watches;
	struct event *events;     /* a FIFO */
	unsigned ev_head, ev_tail;
	int efd;
	unsigned fail_commits;
	tmemd_xs_tx next_tx;
};

struct fake_xs *fake_xs_new(void)
{
	struct fake_xs *fx = calloc(1, sizeof(*fx));

	fx->events = calloc(MAX_EVENTS, sizeof(*fx->events));
	fx->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	fx->next_tx = 1;
	/* The root: dom0's, readable by nobody else. */
	fx->nodes = calloc(1, sizeof(*fx->nodes));
	fx->nodes->path = strdup("/");
	fx->nodes->value = strdup("");
	fx->nodes->nr_perms = 1;
	return fx;
}

void fake_xs_free(struct fake_xs *fx)
{
	if (!fx)
		return;
	while (fx->nodes) {
		struct node *n = fx->nodes;

		fx->nodes = n->next;
		free(n->path);
		free(n->value);
		free(n);
	}
	while (fx->watches) {
		struct watch *w = fx->watches;

		fx->watches = w->next;
		free(w->path);
		free(w->token);
		free(w);
	}
	close(fx->efd);
	free(fx->events);
	free(fx);
}

static struct node *find(struct fake_xs *fx, const char *path)
{
	for (struct node *n = fx->nodes; n; n = n->next)
		if (!strcmp(n->path, path))
			return n;
	return NULL;
}

/* Whether path is base or below it. */
static bool under(const char *path, const char *base)
{
	size_t n = strlen(base);

	if (!strcmp(base, "/"))
		return path[0] == '/';
	return !strncmp(path, base, n) && (path[n] == '\0' || path[n] == '/');
}

static void queue(struct fake_xs *fx, const char *path, const char *token)
{
	struct event *e;
	uint64_t one = 1;

	if (fx->ev_tail - fx->ev_head == MAX_EVENTS)
		abort(); /* a test that floods its own store */
	e = &fx->events[fx->ev_tail++ % MAX_EVENTS];
	snprintf(e->path, sizeof(e->path), "%s", path);
	snprintf(e->token, sizeof(e->token), "%s", token);
	if (write(fx->efd, &one, sizeof(one)) < 0)
		abort();
}

static void fire(struct fake_xs *fx, const char *path)
{
	for (struct watch *w = fx->watches; w; w = w->next)
		if (path[0] == '@' ? !strcmp(path, w->path) : under(path, w->path))
			queue(fx, path, w->token);
}

void fake_xs_fire(struct fake_xs *fx, const char *path)
{
	fire(fx, path);
}

/* xenstored's perm check: dom0 and the owner may do anything; others
 * get their own entry's bits, else the owner entry's default bits. */
static bool allowed(const struct node *n, uint32_t domid, uint32_t want)
{
	if (domid == 0 || n->perms[0].domid == domid)
		return true;
	for (unsigned i = 1; i < n->nr_perms; i++)
		if (n->perms[i].domid == domid)
			return (n->perms[i].perms & want) == want;
	return (n->perms[0].perms & want) == want;
}

static struct node *parent_of(struct fake_xs *fx, const char *path)
{
	char buf[TMEMD_XS_PATH_MAX];
	char *slash;

	snprintf(buf, sizeof(buf), "%s", path);
	slash = strrchr(buf, '/');
	if (!slash)
		return NULL;
	if (slash == buf)
		return find(fx, "/");
	*slash = '\0';
	return find(fx, buf);
}

/* Creates path and missing parents, each inheriting its parent's
 * permissions, owned by the creator when that is a domU. */
static struct node *create(struct fake_xs *fx, uint32_t domid, const char *path)
{
	struct node *n = find(fx, path), *p;
	char buf[TMEMD_XS_PATH_MAX];

	if (n)
		return n;
	p = parent_of(fx, path);
	if (!p) {
		char *slash;

		snprintf(buf, sizeof(buf), "%s", path);
		slash = strrchr(buf, '/');
		*slash = '\0';
		p = create(fx, domid, buf);
	}
	if (!p || !allowed(p, domid, TMEMD_XS_PERM_WRITE))
		return NULL;
	n = calloc(1, sizeof(*n));
	n->path = strdup(path);
	n->value = strdup("");
	memcpy(n->perms, p->perms, sizeof(n->perms));
	n->nr_perms = p->nr_perms;
	if (domid != 0)
		n->perms[0].domid = domid;
	n->next = fx->nodes;
	fx->nodes = n;
	return n;
}

int fake_xs_write_as(struct fake_xs *fx, uint32_t domid, const char *path,
		     const char *value)
{
	struct node *n = find(fx, path);

	if (path[0] != '/' && path[0] != '@')
		return -EINVAL;
	if (n && !allowed(n, domid, TMEMD_XS_PERM_WRITE))
		return -EACCES;
	if (!n)
		n = create(fx, domid, path);
	if (!n)
		return -EACCES;
	free(n->value);
	n->value = strdup(value);
	fire(fx, path);
	return 0;
}

int fake_xs_read_as(struct fake_xs *fx, uint32_t domid, const char *path,
		    char **value)
{
	struct node *n = find(fx, path);

	if (!n)
		return -ENOENT;
	if (!allowed(n, domid, TMEMD_XS_PERM_READ))
		return -EACCES;
	*value = strdup(n->value);
	return 0;
}

int fake_xs_rm_as(struct fake_xs *fx, uint32_t domid, const char *path)
{
	struct node *n = find(fx, path);

	if (!n)
		return 0;
	if (!allowed(n, domid, TMEMD_XS_PERM_WRITE))
		return -EACCES;
	for (struct node **pp = &fx->nodes; *pp;) {
		struct node *c = *pp;

		if (under(c->path, path)) {
			*pp = c->next;
			fire(fx, c->path);
			free(c->path);
			free(c->value);
			free(c);
		} else {
			pp = &c->next;
		}
	}
	return 0;
}

unsigned fake_xs_perms(struct fake_xs *fx, const char *path,
		       struct tmemd_xs_perm *out, unsigned max)
{
	struct node *n = find(fx, path);

	if (!n)
		return 0;
	for (unsigned i = 0; i < n->nr_perms && i < max; i++)
		out[i] = n->perms[i];
	return n->nr_perms;
}

bool fake_xs_exists(struct fake_xs *fx, const char *path)
{
	return find(fx, path) != NULL;
}

void fake_xs_fail_commits(struct fake_xs *fx, unsigned n)
{
	fx->fail_commits = n;
}

unsigned fake_xs_nr_watches(struct fake_xs *fx)
{
	unsigned n = 0;

	for (struct watch *w = fx->watches; w; w = w->next)
		n++;
	return n;
}

/* ---- the ops the backend sees: dom0's connection ---- */

static int op_read(void *h, tmemd_xs_tx tx, const char *path, char **value)
{
	(void)tx;
	return fake_xs_read_as(h, 0, path, value);
}

static int op_write(void *h, tmemd_xs_tx tx, const char *path, const char *value)
{
	(void)tx;
	return fake_xs_write_as(h, 0, path, value);
}

static int op_mkdir_perms(void *h, tmemd_xs_tx tx, const char *path,
			  const struct tmemd_xs_perm *perms, unsigned nr)
{
	struct node *n;

	(void)tx;
	if (nr == 0 || nr > MAX_PERMS)
		return -EINVAL;
	n = create(h, 0, path);
	if (!n)
		return -EACCES;
	memcpy(n->perms, perms, nr * sizeof(*perms));
	n->nr_perms = nr;
	fire(h, path);
	return 0;
}

static int op_rm(void *h, tmemd_xs_tx tx, const char *path)
{
	(void)tx;
	return fake_xs_rm_as(h, 0, path);
}

static int op_watch(void *h, const char *path, const char *token)
{
	struct fake_xs *fx = h;
	struct watch *w = calloc(1, sizeof(*w));

	w->path = strdup(path);
	w->token = strdup(token);
	w->next = fx->watches;
	fx->watches = w;
	queue(fx, path, token); /* xenstored fires a new watch once */
	return 0;
}

static int op_unwatch(void *h, const char *path, const char *token)
{
	struct fake_xs *fx = h;

	for (struct watch **pp = &fx->watches; *pp; pp = &(*pp)->next) {
		struct watch *w = *pp;

		if (!strcmp(w->path, path) && !strcmp(w->token, token)) {
			*pp = w->next;
			free(w->path);
			free(w->token);
			free(w);
			return 0;
		}
	}
	return -ENOENT;
}

static int op_fd(void *h)
{
	return ((struct fake_xs *)h)->efd;
}

static int op_read_watch(void *h, char path[TMEMD_XS_PATH_MAX],
			 char token[TMEMD_XS_TOKEN_MAX])
{
	struct fake_xs *fx = h;
	struct event *e;
	uint64_t v;

	if (fx->ev_head == fx->ev_tail) {
		if (read(fx->efd, &v, sizeof(v)) < 0)
			v = 0; /* drained already */
		return 0;
	}
	e = &fx->events[fx->ev_head++ % MAX_EVENTS];
	memcpy(path, e->path, TMEMD_XS_PATH_MAX);
	memcpy(token, e->token, TMEMD_XS_TOKEN_MAX);
	return 1;
}

static int op_tx_start(void *h, tmemd_xs_tx *tx)
{
	struct fake_xs *fx = h;

	*tx = fx->next_tx++;
	return 0;
}

/* Writes in a transaction are applied at once; a failed commit only
 * makes the backend redo them, which must then be harmless. */
static int op_tx_end(void *h, tmemd_xs_tx tx, bool abort_tx)
{
	struct fake_xs *fx = h;

	(void)tx;
	if (!abort_tx && fx->fail_commits) {
		fx->fail_commits--;
		return -EAGAIN;
	}
	return 0;
}

static void op_close(void *h)
{
	(void)h;
}

static const struct tmemd_xs_ops fake_ops = {
	.read = op_read,
	.write = op_write,
	.mkdir_perms = op_mkdir_perms,
	.rm = op_rm,
	.watch = op_watch,
	.unwatch = op_unwatch,
	.fd = op_fd,
	.read_watch = op_read_watch,
	.tx_start = op_tx_start,
	.tx_end = op_tx_end,
	.close = op_close,
};

struct tmemd_xs fake_xs_handle(struct fake_xs *fx)
{
	return (struct tmemd_xs){ .ops = &fake_ops, .h = fx };
}
