// SPDX-License-Identifier: MIT
/*
 * usnic-rel-stat: the usnic_rel counters per device, endpoint and peer, as
 * totals or as rates per second (-i), in the spirit of `ip -s link` and sar.
 *
 * Sources (roots overridable with USNIC_REL_SYSFS and USNIC_REL_DEBUGFS so
 * tests can feed a fake tree):
 *   <sysfs>/counters/<name>                 device totals, one decimal value a file
 *   <sysfs>/endpoints/ep<N>/counters/<name> per endpoint
 *   <sysfs>/endpoints/ep<N>/{address,pid,incarnation,mtu_cmd,mtu_data,peers}
 *   <debugfs>/ep<N>/peers                   per-peer connection state (root only)
 * Counter names are not built in: whatever the module exports is shown,
 * sorted by name.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_SYSFS "/sys/class/misc/usnic_rel"
#define DEFAULT_DEBUGFS "/sys/kernel/debug/usnic_rel"
#define PAIRS_PER_LINE 3

struct counter {
	char name[64];
	uint64_t value;
};

struct counter_set {
	struct counter *v;
	size_t n;
};

struct ep_attrs {
	char address[96], pid[24], incarnation[24], mtu_cmd[24], mtu_data[24], peers[24];
};

struct ep_snap {
	unsigned int id;
	struct ep_attrs attrs;
	struct counter_set counters;
};

struct snapshot {
	struct timespec when; /* CLOCK_MONOTONIC, for rates */
	struct timespec wall; /* CLOCK_REALTIME, for the report header */
	char abi[24];
	struct counter_set device;
	struct ep_snap *eps;
	size_t neps;
};

static struct {
	const char *sysfs, *debugfs;
	double interval; /* 0: one report of totals */
	long count; /* reports in interval mode; 0: until interrupted */
	long ep; /* -1: every endpoint */
	bool peers, all, json;
} opt = { .ep = -1 };

static const char *prog = "usnic-rel-stat";

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* Formats a path into @buf (PATH_MAX bytes); too long a path is fatal. */
__attribute__((format(printf, 2, 3))) static void mkpath(char *buf, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX)
		die("path too long: %s", buf);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

/* Reads a small text file into @buf without its trailing newline; 0 or -errno. */
static int read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct counter *)a)->name, ((const struct counter *)b)->name);
}

/* Reads every counter file of directory @dir, sorted by name; 0 or -errno. */
static int read_counters(const char *dir, struct counter_set *set)
{
	char path[PATH_MAX], text[32], *end;
	struct dirent *de;
	DIR *d = opendir(dir);

	set->v = NULL;
	set->n = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct counter *c;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(c->name))
			continue;
		mkpath(path, "%s/%s", dir, de->d_name);
		if (read_text(path, text, sizeof(text)))
			continue; /* vanished with its endpoint */
		set->v = xrealloc(set->v, (set->n + 1) * sizeof(*set->v));
		c = &set->v[set->n];
		errno = 0;
		c->value = strtoull(text, &end, 10);
		if (errno || end == text || *end) {
			fprintf(stderr, "%s: %s: not a counter value: '%s'\n", prog, path, text);
			continue;
		}
		strcpy(c->name, de->d_name);
		set->n++;
	}
	closedir(d);
	qsort(set->v, set->n, sizeof(*set->v), by_name);
	return 0;
}

static const struct counter *find_counter(const struct counter_set *set, const char *name)
{
	struct counter key;

	snprintf(key.name, sizeof(key.name), "%s", name);
	return set->n ? bsearch(&key, set->v, set->n, sizeof(*set->v), by_name) : NULL;
}

static void read_attr(const char *epdir, const char *name, char *buf, size_t size)
{
	char path[PATH_MAX];

	mkpath(path, "%s/%s", epdir, name);
	if (read_text(path, buf, size))
		snprintf(buf, size, "?");
}

/* Reads endpoint @id; -ENOENT when it went away meanwhile. */
static int read_ep(unsigned int id, struct ep_snap *ep)
{
	char dir[PATH_MAX], cdir[PATH_MAX];
	struct ep_attrs *a = &ep->attrs;

	mkpath(dir, "%s/endpoints/ep%u", opt.sysfs, id);
	mkpath(cdir, "%s/counters", dir);
	ep->id = id;
	if (read_counters(cdir, &ep->counters))
		return -ENOENT;
	read_attr(dir, "address", a->address, sizeof(a->address));
	read_attr(dir, "pid", a->pid, sizeof(a->pid));
	read_attr(dir, "incarnation", a->incarnation, sizeof(a->incarnation));
	read_attr(dir, "mtu_cmd", a->mtu_cmd, sizeof(a->mtu_cmd));
	read_attr(dir, "mtu_data", a->mtu_data, sizeof(a->mtu_data));
	read_attr(dir, "peers", a->peers, sizeof(a->peers));
	return 0;
}

static int by_id(const void *a, const void *b)
{
	unsigned int x = ((const struct ep_snap *)a)->id, y = ((const struct ep_snap *)b)->id;

	return x < y ? -1 : x > y;
}

static void take_snapshot(struct snapshot *s)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	memset(s, 0, sizeof(*s));
	clock_gettime(CLOCK_MONOTONIC, &s->when);
	clock_gettime(CLOCK_REALTIME, &s->wall);
	mkpath(path, "%s/abi_version", opt.sysfs);
	if (read_text(path, s->abi, sizeof(s->abi)))
		snprintf(s->abi, sizeof(s->abi), "?");
	mkpath(path, "%s/counters", opt.sysfs);
	if (read_counters(path, &s->device))
		die("%s missing: this usnic_rel module has no sysfs counters", path);
	mkpath(path, "%s/endpoints", opt.sysfs);
	d = opendir(path);
	if (!d)
		die("%s missing: this usnic_rel module has no sysfs counters", path);
	while ((de = readdir(d))) {
		unsigned int id;
		char tail;

		if (sscanf(de->d_name, "ep%u%c", &id, &tail) != 1)
			continue;
		if (opt.ep >= 0 && id != (unsigned long)opt.ep)
			continue;
		s->eps = xrealloc(s->eps, (s->neps + 1) * sizeof(*s->eps));
		if (!read_ep(id, &s->eps[s->neps]))
			s->neps++;
	}
	closedir(d);
	qsort(s->eps, s->neps, sizeof(*s->eps), by_id);
}

static void free_snapshot(struct snapshot *s)
{
	for (size_t i = 0; i < s->neps; i++)
		free(s->eps[i].counters.v);
	free(s->eps);
	free(s->device.v);
}

/* The same endpoint in the previous snapshot: same id and incarnation (ids are reused). */
static const struct ep_snap *find_ep(const struct snapshot *s, const struct ep_snap *ep)
{
	for (size_t i = 0; s && i < s->neps; i++)
		if (s->eps[i].id == ep->id &&
		    !strcmp(s->eps[i].attrs.incarnation, ep->attrs.incarnation))
			return &s->eps[i];
	return NULL;
}

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/*
 * Change of counter @c since @prev (NULL: a new object, so everything is new).
 * A counter that went down was reset (module reloaded): count from zero.
 */
static uint64_t delta(const struct counter *c, const struct counter_set *prev)
{
	const struct counter *p = prev ? find_counter(prev, c->name) : NULL;

	return p && p->value <= c->value ? c->value - p->value : c->value;
}

/* --- text output ---------------------------------------------------------- */

typedef char value_text[32];

/*
 * Name-value pairs, PAIRS_PER_LINE a line: totals, or with @have_prev rates
 * over @secs since @prev (NULL: the object is new).
 */
static void print_counters(const struct counter_set *set, const struct counter_set *prev,
			   bool have_prev, double secs)
{
	value_text *vals = xrealloc(NULL, (set->n + 1) * sizeof(*vals));
	int namew = 0, valw = 0, shown = 0;
	size_t i;

	for (i = 0; i < set->n; i++) {
		const struct counter *c = &set->v[i];
		bool zero;

		if (have_prev) {
			uint64_t d = delta(c, prev);

			snprintf(vals[i], sizeof(vals[i]), "%.1f", (double)d / secs);
			zero = d == 0;
		} else {
			snprintf(vals[i], sizeof(vals[i]), "%" PRIu64, c->value);
			zero = c->value == 0;
		}
		if (zero && !opt.all) {
			vals[i][0] = '\0';
			continue;
		}
		if ((int)strlen(c->name) > namew)
			namew = (int)strlen(c->name);
		if ((int)strlen(vals[i]) > valw)
			valw = (int)strlen(vals[i]);
	}
	for (i = 0; i < set->n; i++) {
		if (!vals[i][0])
			continue;
		printf("%s%-*s %*s", shown % PAIRS_PER_LINE ? "   " : "    ", namew, set->v[i].name,
		       valw, vals[i]);
		if (++shown % PAIRS_PER_LINE == 0)
			putchar('\n');
	}
	if (shown % PAIRS_PER_LINE)
		putchar('\n');
	if (!shown)
		printf("    %s (-a shows them)\n",
		       have_prev ? "no counter changed" : "all counters are zero");
	free(vals);
}

static void peers_path(unsigned int id, char *path)
{
	mkpath(path, "%s/ep%u/peers", opt.debugfs, id);
}

static void print_peers_text(unsigned int id)
{
	char path[PATH_MAX], line[512];
	FILE *f;
	int n = 0;

	peers_path(id, path);
	f = fopen(path, "re");
	if (!f) {
		printf("    peers: not readable: %s: %s (root and a mounted debugfs needed)\n",
		       path, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		printf("    %s", line);
		n++;
	}
	fclose(f);
	if (!n)
		printf("    no peers\n");
}

static void print_text(const struct snapshot *s, const struct snapshot *prev)
{
	double secs = prev ? seconds_between(&prev->when, &s->when) : 0;

	if (prev) {
		char stamp[16];
		struct tm tm;

		localtime_r(&s->wall.tv_sec, &tm);
		strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
		printf("%s  rates per second over %.2f s\n", stamp, secs);
	}
	if (opt.ep < 0) {
		printf("device: abi %s, %zu endpoint%s\n", s->abi, s->neps,
		       s->neps == 1 ? "" : "s");
		print_counters(&s->device, prev ? &prev->device : NULL, prev, secs);
	}
	for (size_t i = 0; i < s->neps; i++) {
		const struct ep_snap *ep = &s->eps[i];
		const struct ep_snap *old = find_ep(prev, ep);
		const struct ep_attrs *a = &ep->attrs;

		printf("ep%u: %s pid %s incarnation %s mtu_cmd %s mtu_data %s peers %s%s\n", ep->id,
		       a->address, a->pid, a->incarnation, a->mtu_cmd, a->mtu_data, a->peers,
		       prev && !old ? " (new)" : "");
		print_counters(&ep->counters, old ? &old->counters : NULL, prev, secs);
		if (opt.peers)
			print_peers_text(ep->id);
	}
	if (prev)
		putchar('\n');
}

/* --- JSON output (one object a line) --------------------------------------- */

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* A decimal integer as a JSON number, anything else as a string. */
static void json_scalar(const char *s)
{
	const char *digits = s + (*s == '-'), *p = digits;

	while (*p >= '0' && *p <= '9')
		p++;
	if (p != digits && !*p && (digits[0] != '0' || !digits[1]))
		fputs(s, stdout);
	else
		json_string(s);
}

static void json_counters(const struct counter_set *set, const struct counter_set *prev,
			  bool have_prev, double secs)
{
	printf("\"counters\":{");
	for (size_t i = 0; i < set->n; i++)
		printf("%s\"%s\":%" PRIu64, i ? "," : "", set->v[i].name, set->v[i].value);
	putchar('}');
	if (!have_prev)
		return;
	printf(",\"rates\":{");
	for (size_t i = 0; i < set->n; i++)
		printf("%s\"%s\":%.3f", i ? "," : "", set->v[i].name,
		       (double)delta(&set->v[i], prev) / secs);
	putchar('}');
}

/*
 * A debugfs line as an object: "peer" lines open with handle, address and
 * state, "chan" lines with the channel; then "key value" pairs, where a word
 * followed by another word (tx, rx) prefixes the keys after it.
 */
static void json_peer_line(char *line, bool chan)
{
	char *tok[64], *save = NULL, prefix[16] = "";
	int n = 0, i;

	for (char *t = strtok_r(line, " \n", &save); t && n < 64; t = strtok_r(NULL, " \n", &save))
		tok[n++] = t;
	putchar('{');
	if (chan) {
		printf("\"chan\":");
		json_scalar(n > 1 ? tok[1] : "?");
		i = 2;
	} else {
		printf("\"handle\":");
		json_scalar(n > 1 ? tok[1] : "?");
		printf(",\"address\":");
		json_string(n > 2 ? tok[2] : "?");
		printf(",\"state\":");
		json_string(n > 3 ? tok[3] : "?");
		i = 4;
	}
	while (i < n) {
		bool pair = i + 1 < n && (!strcmp(tok[i], "incarnation") || tok[i + 1][0] == '-' ||
					  (tok[i + 1][0] >= '0' && tok[i + 1][0] <= '9'));

		if (!pair) {
			snprintf(prefix, sizeof(prefix), "%.13s_", tok[i++]);
			continue;
		}
		printf(",\"%s%s\":", prefix, tok[i]);
		/* Hex, even when it happens to have only decimal digits. */
		if (!strcmp(tok[i], "incarnation"))
			json_string(tok[i + 1]);
		else
			json_scalar(tok[i + 1]);
		i += 2;
	}
}

static void json_peers(unsigned int id)
{
	char path[PATH_MAX], line[1024];
	int npeers = 0, nchans = 0;
	FILE *f;

	peers_path(id, path);
	f = fopen(path, "re");
	if (!f) {
		char msg[PATH_MAX + 64];

		snprintf(msg, sizeof(msg), "%s: %s", path, strerror(errno));
		printf(",\"peer_detail_error\":");
		json_string(msg);
		return;
	}
	printf(",\"peer_detail\":[");
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "peer ", 5)) {
			if (npeers++)
				printf("]},");
			json_peer_line(line, false);
			printf(",\"chans\":[");
			nchans = 0;
		} else if (npeers && !strncmp(line, "  chan ", 7)) {
			if (nchans++)
				putchar(',');
			json_peer_line(line + 2, true);
			putchar('}');
		}
	}
	fclose(f);
	printf("%s]", npeers ? "]}" : "");
}

static void print_json(const struct snapshot *s, const struct snapshot *prev)
{
	double secs = prev ? seconds_between(&prev->when, &s->when) : 0;

	printf("{\"time\":%lld.%03ld", (long long)s->wall.tv_sec, s->wall.tv_nsec / 1000000);
	if (prev)
		printf(",\"interval_s\":%.6f", secs);
	if (opt.ep < 0) {
		printf(",\"device\":{\"abi_version\":");
		json_scalar(s->abi);
		putchar(',');
		json_counters(&s->device, prev ? &prev->device : NULL, prev, secs);
		putchar('}');
	}
	printf(",\"endpoints\":[");
	for (size_t i = 0; i < s->neps; i++) {
		const struct ep_snap *ep = &s->eps[i];
		const struct ep_snap *old = find_ep(prev, ep);
		const struct ep_attrs *a = &ep->attrs;

		printf("%s{\"id\":%u,\"address\":", i ? "," : "", ep->id);
		json_string(a->address);
		printf(",\"pid\":");
		json_scalar(a->pid);
		printf(",\"incarnation\":");
		json_string(a->incarnation);
		printf(",\"mtu_cmd\":");
		json_scalar(a->mtu_cmd);
		printf(",\"mtu_data\":");
		json_scalar(a->mtu_data);
		printf(",\"peers\":");
		json_scalar(a->peers);
		putchar(',');
		json_counters(&ep->counters, old ? &old->counters : NULL, prev, secs);
		if (opt.peers)
			json_peers(ep->id);
		putchar('}');
	}
	printf("]}\n");
}

/* --- main --------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-a] [-p] [-j] [-e N] [-i SECONDS [-c COUNT]]\n"
		"Print the usnic_rel counters of the device and of each endpoint.\n"
		"\n"
		"  -i SECONDS  every SECONDS, print rates per second since the previous read\n"
		"  -c COUNT    with -i: stop after COUNT reports (default: until interrupted)\n"
		"  -e N        only endpoint ep<N> (no device totals)\n"
		"  -p          also each endpoint's peers (debugfs, needs root)\n"
		"  -a          also counters that are zero (or did not change, with -i)\n"
		"  -j          JSON, one object a report, every counter\n"
		"  -h, --help  this help\n"
		"\n"
		"Environment: USNIC_REL_SYSFS (default %s),\n"
		"             USNIC_REL_DEBUGFS (default %s).\n"
		"See usnic-rel-stat(8).\n",
		prog, DEFAULT_SYSFS, DEFAULT_DEBUGFS);
}

static long parse_long(const char *arg, const char *what, long min)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min)
		die("%s %s: expected %s", what, arg, min ? "a number of at least 1" : "a number");
	return v;
}

static void parse_args(int argc, char **argv)
{
	static const struct option longopts[] = { { "help", no_argument, NULL, 'h' },
						  { NULL, 0, NULL, 0 } };
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "ac:e:hi:jp", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			opt.all = true;
			break;
		case 'c':
			opt.count = parse_long(optarg, "-c", 1);
			break;
		case 'e':
			opt.ep = parse_long(optarg, "-e", 0);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'i':
			errno = 0;
			opt.interval = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(opt.interval >= 0.01) ||
			    opt.interval > 86400)
				die("-i %s: expected seconds from 0.01 to 86400", optarg);
			break;
		case 'j':
			opt.json = true;
			break;
		case 'p':
			opt.peers = true;
			break;
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc)
		die("unexpected argument '%s' (see --help)", argv[optind]);
	if (opt.count && !opt.interval)
		die("-c needs -i");
}

static void report(const struct snapshot *s, const struct snapshot *prev)
{
	if (opt.json)
		print_json(s, prev);
	else
		print_text(s, prev);
	fflush(stdout);
}

/* Sleeps until @start plus @secs, so that reports do not drift. */
static void sleep_until(const struct timespec *start, double secs)
{
	struct timespec t = *start;
	long long ns = (long long)(secs * 1e9) + t.tv_nsec;

	t.tv_sec += (time_t)(ns / 1000000000);
	t.tv_nsec = (long)(ns % 1000000000);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

int main(int argc, char **argv)
{
	struct snapshot prev, cur;
	struct stat st;

	parse_args(argc, argv);
	opt.sysfs = getenv("USNIC_REL_SYSFS") ?: DEFAULT_SYSFS;
	opt.debugfs = getenv("USNIC_REL_DEBUGFS") ?: DEFAULT_DEBUGFS;
	if (stat(opt.sysfs, &st))
		die("usnic_rel not loaded: %s missing; modprobe usnic_rel", opt.sysfs);

	take_snapshot(&cur);
	if (opt.ep >= 0 && !cur.neps)
		die("no endpoint ep%ld in %s/endpoints", opt.ep, opt.sysfs);
	if (!opt.interval) {
		report(&cur, NULL);
		free_snapshot(&cur);
		return 0;
	}
	for (long n = 0; !opt.count || n < opt.count; n++) {
		prev = cur;
		sleep_until(&prev.when, opt.interval);
		take_snapshot(&cur);
		report(&cur, &prev);
		free_snapshot(&prev);
	}
	free_snapshot(&cur);
	return 0;
}
