// SPDX-License-Identifier: MIT
/*
 * libusnicrel tagged messaging: piecewise rendezvous, the sender's side.
 * Registered pages count against RLIMIT_MEMLOCK, so a process that may not
 * lock memory freely does not register a large message at once. Its
 * request-to-send goes without a key; once a receive matched it, the
 * receiver asks (CTS) and the sender registers the message a window at a
 * time, two at most, each dropped when the receiver says it read it
 * (WDONE). Nothing is pinned for a message nobody has matched, so pinned
 * memory always belongs to reads under way and is released as they end;
 * that holds for the whole process, whose contexts share the limit and
 * wait for each other's windows (pins.c).
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../internal.h"
#include "msg.h"

#define UREL_MSG_WIN_DEFAULT (4UL << 20)
#define UREL_MSG_WIN_MIN (64UL << 10)

static bool urel_msg_can_lock(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &h, d))
		return false;
	return d[CAP_TO_INDEX(CAP_IPC_LOCK)].effective & CAP_TO_MASK(CAP_IPC_LOCK);
}

/*
 * Whether the memlock limit refused @len more bytes, rather than an
 * allocation failing: what the process has pinned (VmPin) plus @len over
 * the limit. Unknown (the status file cannot be read) counts as not.
 */
static bool urel_msg_over_memlock(size_t len)
{
	unsigned long long kb = 0;
	bool found = false;
	struct rlimit rl;
	char line[128];
	FILE *f;

	if (urel_msg_can_lock() || getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return false;
	f = fopen("/proc/self/status", "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "VmPin: %llu kB", &kb) == 1;
	fclose(f);
	return found && kb * 1024 + len > rl.rlim_cur;
}

/*
 * The largest rendezvous message registered whole (SIZE_MAX: every one),
 * from UREL_MSG_RNDV_WINDOW, else a quarter of RLIMIT_MEMLOCK up to 4 MiB,
 * so that two windows of two messages fit. -EINVAL for a bad override.
 */
int urel_msg_window_size(size_t *win)
{
	const char *s = getenv("UREL_MSG_RNDV_WINDOW");
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct rlimit rl;

	if (s && *s) {
		unsigned long long v;
		char *end;

		errno = 0;
		v = strtoull(s, &end, 0);
		if (errno || *end || (v && v < page) || v > SIZE_MAX)
			return -EINVAL;
		if (v) {
			*win = (size_t)v / page * page;
			return 0;
		}
	}
	if (urel_msg_can_lock() || getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY) {
		*win = SIZE_MAX;
		return 0;
	}
	*win = rl.rlim_cur / 4 < UREL_MSG_WIN_DEFAULT ? rl.rlim_cur / 4 : UREL_MSG_WIN_DEFAULT;
	*win = *win / page * page;
	if (*win < UREL_MSG_WIN_MIN)
		*win = UREL_MSG_WIN_MIN;
	return 0;
}

static struct urel_msg_req *urel_msg_win_find(struct urel_msg *m, urel_peer_t peer, uint64_t sreq)
{
	for (struct urel_msg_req *r = m->waiting.head; r; r = r->next) {
		if (r->id == sreq && r->peer == peer && r->windowed)
			return r;
	}
	return NULL;
}

static void urel_msg_win_drop(struct urel_msg *m, struct urel_msg_win *w)
{
	urel_mr_dereg(w->mr);
	urel_msg_pins_drop(m, w->len);
	*w = (struct urel_msg_win){ 0 };
	/* Room again: sends that could not register may now. */
	if (m->pin_waiters)
		m->pin_retry = true;
}

static void urel_msg_win_wait(struct urel_msg *m, struct urel_msg_req *r, unsigned long gen)
{
	if (!r->pin_wait) {
		r->pin_wait = true;
		__atomic_add_fetch(&m->pin_waiters, 1, __ATOMIC_RELAXED);
		m->pin_waits++;
	}
	m->pin_seen = gen;
}

static void urel_msg_win_unwait(struct urel_msg *m, struct urel_msg_req *r)
{
	if (r->pin_wait) {
		r->pin_wait = false;
		__atomic_sub_fetch(&m->pin_waiters, 1, __ATOMIC_RELAXED);
	}
}

/* Drop what send @r still holds (it completed or failed). Under m->lock. */
void urel_msg_win_release(struct urel_msg *m, struct urel_msg_req *r)
{
	for (int i = 0; i < 2; i++) {
		if (r->win[i].mr)
			urel_msg_win_drop(m, &r->win[i]);
	}
	urel_msg_win_unwait(m, r);
}

static int urel_msg_win_announce(struct urel_msg *m, struct urel_msg_req *r, size_t off, size_t len,
				 uint64_t rkey, int status)
{
	unsigned char hdr[sizeof(struct urel_am_hdr) + 40];
	struct urel_am_hdr h = urel_am_hdr(UREL_AM_MSG, UREL_MSG_OP_WIN, 0, 0);
	unsigned char *p = hdr + sizeof(h);

	memcpy(hdr, &h, sizeof(h));
	urel_msg_put64(p, r->rid);
	urel_msg_put64(p + 8, off);
	urel_msg_put64(p + 16, len);
	urel_msg_put64(p + 24, rkey);
	urel_msg_put64(p + 32, (uint64_t)(int64_t)status);
	return urel_msg_post(m, r->peer, UREL_CHAN_CMD, hdr, sizeof(hdr), NULL, 0, NULL);
}

/* Send @r failed: tell its receiver (no FIN will come), complete it. Under m->lock. */
static void urel_msg_win_fail(struct urel_msg *m, struct urel_msg_req *r, int err)
{
	if (urel_msg_win_announce(m, r, 0, 0, 0, err))
		m->dropped++;
	urel_msg_list_del(&m->waiting, r);
	urel_msg_send_done(r, err);
	m->pin_failures++;
}

/*
 * Register and announce the windows @r may hold. A window that does not fit
 * is halved down to UREL_MSG_WIN_MIN; if even that fails while windows of
 * any context of the process are out, it waits for one to be read; with
 * none out, nothing will free memory, so the send fails. A failed
 * allocation only delays it. Under m->lock.
 */
static void urel_msg_win_fill(struct urel_msg *m, struct urel_msg_req *r)
{
	while (r->reg_pos < r->swant && (!r->win[0].mr || !r->win[1].mr)) {
		struct urel_msg_win *w = r->win[0].mr ? &r->win[1] : &r->win[0];
		/* Read first: a release after our attempt must wake us. */
		unsigned long gen = urel_msg_pins_gen();
		size_t len = r->swant - r->reg_pos;
		struct urel_mr *mr = NULL;
		int ret;

		/* (SIZE_MAX: a whole registration failed for lack of memory.) */
		if (len > m->rndv_win)
			len = m->rndv_win == SIZE_MAX ? UREL_MSG_WIN_DEFAULT : m->rndv_win;
		for (;;) {
			ret = urel_mr_reg(m->ep, (char *)r->sbuf + r->reg_pos, len,
					  UREL_ACCESS_REMOTE_READ, &mr);
			if (ret != -ENOMEM || len <= UREL_MSG_WIN_MIN)
				break;
			len /= 2;
		}
		/*
		 * Windows of the process (ours or another context's) will be
		 * released as they are read; a failed allocation passes
		 * (progress retries). Only the limit with no window out
		 * anywhere in the process fails the send.
		 */
		if (ret == -ENOMEM && (urel_msg_pins_held() || !urel_msg_over_memlock(len))) {
			urel_msg_win_wait(m, r, gen);
			if (!urel_msg_pins_held())
				__atomic_store_n(&m->pin_again, true, __ATOMIC_RELAXED);
			return;
		}
		if (ret) {
			urel_msg_win_fail(m, r, ret);
			return;
		}
		urel_msg_win_unwait(m, r);
		ret = urel_msg_win_announce(m, r, r->reg_pos, len, urel_mr_rkey(mr), 0);
		if (ret == -ENOMEM) {
			/* Not even queued: progress registers and announces it again. */
			urel_mr_dereg(mr);
			urel_msg_win_wait(m, r, gen);
			__atomic_store_n(&m->pin_again, true, __ATOMIC_RELAXED);
			return;
		}
		if (ret) {
			urel_mr_dereg(mr);
			urel_msg_win_fail(m, r, ret);
			return;
		}
		*w = (struct urel_msg_win){ .mr = mr, .off = r->reg_pos, .len = len };
		urel_msg_pins_take(m, len);
		r->reg_pos += len;
	}
}

/*
 * Give the sends that waited for pinned memory another try, oldest first;
 * the first that still cannot pin stops the pass (the others would fail
 * the same, each at the cost of a few registrations). Under m->lock.
 */
void urel_msg_win_retry(struct urel_msg *m)
{
	while (m->pin_retry) {
		struct urel_msg_req *r, *next;

		m->pin_retry = false;
		for (r = m->waiting.head; r && m->pin_waiters; r = next) {
			next = r->next;
			if (!r->pin_wait)
				continue;
			urel_msg_win_fill(m, r);
			if (r->pin_wait)
				break;
		}
	}
}

/* The receiver matched send @sreq and wants @want bytes, its reads named @rid. */
void urel_msg_on_cts(struct urel_msg *m, urel_peer_t peer, uint64_t sreq, uint64_t rid,
		     uint64_t want)
{
	struct urel_msg_req *r = urel_msg_win_find(m, peer, sreq);

	if (!r || r->cts || !want || want > r->st.len) {
		m->dropped++;
		return;
	}
	r->cts = true;
	r->rid = rid;
	r->swant = want;
	urel_msg_win_fill(m, r);
	urel_msg_win_retry(m);
}

/* The receiver read the window of send @sreq at @off: unpin it, pin the next. */
void urel_msg_on_wdone(struct urel_msg *m, urel_peer_t peer, uint64_t sreq, uint64_t off)
{
	struct urel_msg_req *r = urel_msg_win_find(m, peer, sreq);
	int i;

	for (i = 0; r && i < 2; i++) {
		if (r->win[i].mr && r->win[i].off == off)
			break;
	}
	if (!r || i == 2) {
		m->dropped++;
		return;
	}
	urel_msg_win_drop(m, &r->win[i]);
	urel_msg_win_fill(m, r);
	urel_msg_win_retry(m);
}
