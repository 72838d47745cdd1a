/* SPDX-License-Identifier: MIT */
/*
 * tmem-bench: load generator for tmemd over the local transport, with
 * memcached on loopback as the yardstick.  Prints numbers; it judges
 * nothing (the targets are in README.md, "Benchmarks").
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: tmem-bench [OPTION]...\n"
		"Runs workloads against tmemd (and memcached) and prints ops/s and latency.\n\n"
		"  -s, --socket PATH     tmemd's guest.sock (default: libtmem's default)\n"
		"  -j, --json            print one JSON document\n"
		"  -c, --clients N       processes in the mix and scale phases (default 2)\n"
		"  -m, --mix P:G:F       put:get:flush ratio of the mix (default 50:40:10)\n"
		"  -C, --content KIND    page content: zero, random or text (default random)\n"
		"      --corpus FILE     page content from FILE's 4 KiB pages (make-corpus.sh);\n"
		"                        adds the phase lz4: one core's LZ4 rate on them\n"
		"  -k, --keys N          distinct pages (default 16384)\n"
		"  -d, --depth N         requests in flight when pipelining (default 32)\n"
		"  -n, --ops N           ops per client in the mix (default 100000)\n"
		"      --pipe-ops N      pipelined puts, per client in scale (default 500000)\n"
		"      --rt-ops N        put->get round trips (default 100000)\n"
		"      --idle-pid PID    also measure tmemd's idle CPU (PID) ...\n"
		"      --idle-seconds S  ... over S seconds (default 5)\n"
		"  -p, --phases LIST     comma list of memcpy,pipeline,scale,roundtrip,\n"
		"                        mix,memcached,idle (default all but scale\n"
		"                        and idle; idle is added by --idle-pid)\n"
		"  -h, --help\n");
}

static int parse_mix(const char *s, struct bench_opts *o)
{
	if (sscanf(s, "%u:%u:%u", &o->mix_put, &o->mix_get, &o->mix_flush) != 3 ||
	    o->mix_put + o->mix_get + o->mix_flush == 0)
		return -1;
	return 0;
}

static int parse_opts(int argc, char **argv, struct bench_opts *o)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "clients", required_argument, NULL, 'c' },
		{ "mix", required_argument, NULL, 'm' },
		{ "content", required_argument, NULL, 'C' },
		{ "corpus", required_argument, NULL, 5 },
		{ "keys", required_argument, NULL, 'k' },
		{ "depth", required_argument, NULL, 'd' },
		{ "ops", required_argument, NULL, 'n' },
		{ "pipe-ops", required_argument, NULL, 1 },
		{ "rt-ops", required_argument, NULL, 2 },
		{ "idle-pid", required_argument, NULL, 3 },
		{ "idle-seconds", required_argument, NULL, 4 },
		{ "phases", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct bench_opts){ .clients = 2, .mix_put = 50, .mix_get = 40,
				  .mix_flush = 10, .content = CONTENT_RANDOM,
				  .keys = 16384, .depth = 32, .ops = 100000,
				  .pipe_ops = 500000, .rt_ops = 100000,
				  .idle_seconds = 5 };
	snprintf(o->phases, sizeof(o->phases), "memcpy,pipeline,roundtrip,mix,memcached");
	while ((c = getopt_long(argc, argv, "s:jc:m:C:k:d:n:p:h", lo, NULL)) != -1) {
		switch (c) {
		case 's': o->socket = optarg; break;
		case 'j': o->json = true; break;
		case 'c': o->clients = (unsigned)atoi(optarg); break;
		case 'm':
			if (parse_mix(optarg, o))
				goto bad;
			break;
		case 'C':
			if (!strcmp(optarg, "zero")) o->content = CONTENT_ZERO;
			else if (!strcmp(optarg, "random")) o->content = CONTENT_RANDOM;
			else if (!strcmp(optarg, "text")) o->content = CONTENT_TEXT;
			else goto bad;
			break;
		case 'k': o->keys = strtoull(optarg, NULL, 10); break;
		case 'd': o->depth = (unsigned)atoi(optarg); break;
		case 'n': o->ops = strtoull(optarg, NULL, 10); break;
		case 1: o->pipe_ops = strtoull(optarg, NULL, 10); break;
		case 2: o->rt_ops = strtoull(optarg, NULL, 10); break;
		case 3: o->idle_pid = atoi(optarg); break;
		case 4: o->idle_seconds = (unsigned)atoi(optarg); break;
		case 5:
			if (load_corpus(o, optarg))
				return -1;
			break;
		case 'p': snprintf(o->phases, sizeof(o->phases), "%s", optarg); break;
		case 'h': usage(stdout); exit(0);
		default: goto bad;
		}
	}
	if (optind < argc || !o->clients || o->clients > 64 || !o->keys ||
	    !o->depth || !o->ops || !o->pipe_ops || !o->rt_ops || !o->idle_seconds)
		goto bad;
	if (o->corpus && !strstr(o->phases, "lz4") && strlen(o->phases) + 5 < sizeof(o->phases)) {
		memmove(o->phases + 4, o->phases, strlen(o->phases) + 1);
		memcpy(o->phases, "lz4,", 4);
	}
	if (o->idle_pid && !strstr(o->phases, "idle"))
		strncat(o->phases, ",idle", sizeof(o->phases) - strlen(o->phases) - 1);
	return 0;
bad:
	fprintf(stderr, "tmem-bench: bad arguments; try --help\n");
	return -1;
}

static bool wants(const struct bench_opts *o, const char *phase)
{
	char buf[128], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", o->phases);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (!strcmp(t, phase))
			return true;
	return false;
}

static void print_text(json_t *doc)
{
	json_t *v;

	if ((v = json_object_get(doc, "lz4")))
		printf("LZ4 compress:       %10.0f pages/s on one core (%.2f of a page compressed)\n",
		       jnum(v, "pages_per_s"), jnum(v, "compressed_share"));
	if ((v = json_object_get(doc, "memcpy")))
		printf("cold memcpy:        %10.0f pages/s shuffled destination, %.0f sequential\n",
		       jnum(v, "pages_per_s"), jnum(v, "sequential_pages_per_s"));
	/* A ratio is printed only when its base phase ran (the JSON then
	 * has the key): never a 0.00 x against a phase that was skipped. */
	if ((v = json_object_get(doc, "pipeline"))) {
		printf("pipelined puts:     %10.0f puts/s  (depth %d", jnum(v, "puts_per_s"),
		       (int)jnum(v, "depth"));
		if (json_object_get(v, "ratio_to_cold_memcpy"))
			printf("; %.2f x cold memcpy, %.2f x sequential",
			       jnum(v, "ratio_to_cold_memcpy"), jnum(v, "ratio_to_sequential_memcpy"));
		if (json_object_get(v, "ratio_to_lz4_rate"))
			printf("; %.2f x one core's LZ4 rate", jnum(v, "ratio_to_lz4_rate"));
		printf(")\n");
	}
	if ((v = json_object_get(doc, "scale"))) {
		printf("pipelined puts x%d:  %10.0f puts/s  (%d processes at once",
		       (int)jnum(v, "clients"), jnum(v, "puts_per_s"), (int)jnum(v, "clients"));
		if (json_object_get(v, "ratio_to_one_client"))
			printf("; %.2f x one client", jnum(v, "ratio_to_one_client"));
		if (json_object_get(v, "ratio_to_lz4_rate"))
			printf("; %.2f x one core's LZ4 rate", jnum(v, "ratio_to_lz4_rate"));
		printf(")\n");
	}
	if ((v = json_object_get(doc, "roundtrip")))
		printf("sync put->get:      %10.0f pairs/s p50 %.2f us  p99 %.2f us  p99.9 %.2f us\n",
		       jnum(v, "pairs_per_s"), jnum(v, "p50_us"), jnum(v, "p99_us"), jnum(v, "p999_us"));
	if ((v = json_object_get(doc, "mix")))
		printf("mix %s x%d:     %10.0f ops/s   p50 %.2f us  p99 %.2f us  p99.9 %.2f us  errors %d  get hits %.0f%%\n",
		       json_string_value(json_object_get(v, "ratio")), (int)jnum(v, "clients"),
		       jnum(v, "ops_per_s"), jnum(v, "p50_us"), jnum(v, "p99_us"), jnum(v, "p999_us"),
		       (int)jnum(v, "errors"), 100 * jnum(v, "get_hit_rate"));
	if ((v = json_object_get(doc, "memcached"))) {
		printf("memcached sync:     %10.0f pairs/s p50 %.2f us  p99 %.2f us\n",
		       jnum(v, "sync_pairs_per_s"), jnum(v, "sync_latency.p50_us"),
		       jnum(v, "sync_latency.p99_us"));
		printf("memcached pipelined:%10.0f sets/s, multi-get %.0f gets/s\n",
		       jnum(v, "pipelined_sets_per_s"), jnum(v, "multiget_per_s"));
		if (json_object_get(v, "tmem_sync_ratio"))
			printf("tmem/memcached:     sync %.1fx\n", jnum(v, "tmem_sync_ratio"));
		if (json_object_get(v, "tmem_pipelined_ratio"))
			printf("tmem/memcached:     pipelined %.1fx\n",
			       jnum(v, "tmem_pipelined_ratio"));
	}
	if ((v = json_object_get(doc, "idle")))
		printf("tmemd idle CPU:     %10.2f %% of a core over %d s\n",
		       jnum(v, "cpu_percent"), (int)jnum(v, "seconds"));
}

static const struct {
	const char *name;
	int (*fn)(const struct bench_opts *, json_t *);
} phases[] = {
	{ "lz4", phase_lz4 },
	{ "memcpy", phase_memcpy },
	{ "pipeline", phase_pipeline },
	{ "scale", phase_scale },
	{ "roundtrip", phase_roundtrip },
	{ "mix", phase_mix },
	{ "memcached", phase_memcached },
	{ "idle", phase_idle },
};
#define NR_PHASES (sizeof(phases) / sizeof(phases[0]))

/* A misspelt phase would otherwise just not run. */
static int check_phases(const struct bench_opts *o)
{
	char buf[128], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", o->phases);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		size_t i = 0;

		while (i < NR_PHASES && strcmp(t, phases[i].name))
			i++;
		if (i == NR_PHASES) {
			fprintf(stderr, "tmem-bench: unknown phase '%s'; try --help\n", t);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	json_t *doc;
	int failed = 0;

	if (parse_opts(argc, argv, &o) || check_phases(&o))
		return 2;
	doc = json_object();
	for (size_t i = 0; i < NR_PHASES; i++) {
		if (!wants(&o, phases[i].name))
			continue;
		if (phases[i].fn(&o, doc)) {
			fprintf(stderr, "tmem-bench: phase %s failed\n", phases[i].name);
			failed = 1;
		}
	}
	if (o.json) {
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		putchar('\n');
	} else {
		print_text(doc);
	}
	json_decref(doc);
	return failed;
}
