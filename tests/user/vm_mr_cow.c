// SPDX-License-Identifier: MIT
/*
 * In-VM test: memory registered for remote reads only, then written by
 * the process, must read back as written. A read-only pin takes the page
 * the mapping shows at registration; where the process's next write
 * replaces that page (copy on write), a module that kept it would serve
 * peers stale bytes. Each kind of memory where that happens:
 *
 *   - anonymous memory never written (the shared zero page);
 *   - 4 MiB of it, 2 MiB aligned and read first (the huge zero page when
 *     transparent huge pages are on);
 *   - initialised data of the program (a private mapping of its file);
 *   - a private mapping of a file, writable;
 *   - a read-only private mapping, made writable after the registration;
 *   - and, as the control, a shared mapping of a file (no copy on write).
 *
 * A target endpoint registers each, the process writes it, and an origin
 * endpoint of the same process reads it back through the kernel's RDMA get.
 * Usage: vm_mr_cow
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "urt.h"
#include "urt_ep.h"
#include "urt_lib.h"

#define SMALL (64 * 1024)
#define HUGE_LEN (4 * 1024 * 1024)
#define HUGE_ALIGN (2 * 1024 * 1024)
#define GET_MAX (256 * 1024)

static struct urel_device *dev;
static struct urel_ep *origin, *target;
static urel_peer_t to_target;
static uint8_t back[HUGE_LEN];
static uint8_t untouched[SMALL] __attribute__((aligned(4096)));
static uint8_t initialised[SMALL] __attribute__((aligned(4096))) = { 1, 2, 3 };

/* Get @len bytes of @rkey back (in gets the channel takes) and compare them with @want. */
static void expect(const char *what, uint64_t rkey, const uint8_t *want, size_t len)
{
	memset(back, 0xa5, len);
	for (size_t off = 0; off < len; off += GET_MAX) {
		size_t n = len - off < GET_MAX ? len - off : GET_MAX;
		struct urel_completion c;

		URT_CHECK_EQ(urel_ep_get(origin, to_target, back + off, n, rkey, off, NULL, 0), 0);
		if (urt_poll_n(dev, origin, &c, 1, 30000) != 1) {
			fprintf(stderr, "vm_mr_cow: %s: a get never completed\n", what);
			exit(1);
		}
		URT_CHECK_EQ(c.status, 0);
	}
	if (memcmp(back, want, len)) {
		size_t n = 0;

		for (size_t i = 0; i < len; i++)
			n += back[i] != want[i];
		fprintf(stderr, "vm_mr_cow: %s: %zu of %zu bytes are not what was written\n", what,
			n, len);
		urt_failures++;
	} else {
		printf("vm_mr_cow: %s: ok\n", what);
	}
}

/* Register @mem read-only, write it, read it back remotely. */
static void case_written_after(const char *what, uint8_t *mem, size_t len, uint64_t seed)
{
	struct urel_mr *mr;
	int ret = urel_mr_reg(target, mem, len, UREL_ACCESS_REMOTE_READ, &mr);

	URT_CHECK_EQ(ret, 0);
	if (ret)
		return;
	urt_fill(mem, seed, (uint32_t)len);
	expect(what, urel_mr_rkey(mr), mem, len);
	URT_CHECK_EQ(urel_mr_dereg(mr), 0);
}

static void huge_zero_page(void)
{
	uint8_t *raw = mmap(NULL, HUGE_LEN + HUGE_ALIGN, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *mem;
	volatile uint8_t sum = 0;

	URT_CHECK(raw != MAP_FAILED);
	if (raw == MAP_FAILED)
		return;
	mem = (uint8_t *)(((uintptr_t)raw + HUGE_ALIGN - 1) & ~(uintptr_t)(HUGE_ALIGN - 1));
	madvise(mem, HUGE_LEN, MADV_HUGEPAGE);
	/* Read faults map the (huge) zero page. */
	for (size_t i = 0; i < HUGE_LEN; i += 4096)
		sum += mem[i];
	URT_CHECK_EQ(sum, 0);
	case_written_after("4 MiB read before, never written", mem, HUGE_LEN, 4);
	munmap(raw, HUGE_LEN + HUGE_ALIGN);
}

/* A file of @len zero bytes, mapped with @prot and @flags. */
static uint8_t *file_map(size_t len, int prot, int flags)
{
	char path[] = "/tmp/vm_mr_cow.XXXXXX";
	int fd = mkstemp(path);
	void *p = MAP_FAILED;

	if (fd >= 0) {
		unlink(path);
		if (!ftruncate(fd, (off_t)len))
			p = mmap(NULL, len, prot, flags, fd, 0);
		close(fd);
	}
	URT_CHECK(p != MAP_FAILED);
	return p == MAP_FAILED ? NULL : p;
}

static void read_only_then_writable(void)
{
	uint8_t *mem = mmap(NULL, SMALL, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct urel_mr *mr;

	URT_CHECK(mem != MAP_FAILED);
	if (mem == MAP_FAILED)
		return;
	URT_CHECK_EQ(urel_mr_reg(target, mem, SMALL, UREL_ACCESS_REMOTE_READ, &mr), 0);
	expect("read-only mapping, as registered", urel_mr_rkey(mr), mem, SMALL);
	URT_CHECK_EQ(mprotect(mem, SMALL, PROT_READ | PROT_WRITE), 0);
	urt_fill(mem, 6, SMALL);
	expect("read-only mapping, written after mprotect", urel_mr_rkey(mr), mem, SMALL);
	URT_CHECK_EQ(urel_mr_dereg(mr), 0);
	munmap(mem, SMALL);
}

static int endpoint(struct urel_ep **ep)
{
	struct sockaddr_in sin = urt_sin("127.0.0.1", 0);

	return urel_ep_create(dev, (struct sockaddr *)&sin, sizeof(sin), NULL, ep);
}

static int insert(struct urel_ep *ep, struct urel_ep *peer, urel_peer_t *handle)
{
	struct urel_ep_info info;
	int ret = urel_ep_query(peer, &info);

	return ret ? ret
		   : urel_av_insert(ep, (struct sockaddr *)&info.addr, sizeof(struct sockaddr_in),
				    handle);
}

int main(void)
{
	urel_peer_t to_origin;
	uint8_t *mem;

	if (urel_device_open(NULL, &dev) || endpoint(&target) || endpoint(&origin) ||
	    insert(target, origin, &to_origin) || insert(origin, target, &to_target)) {
		fprintf(stderr, "vm_mr_cow: no device or endpoints\n");
		return 1;
	}
	case_written_after("anonymous memory never written", untouched, SMALL, 1);
	huge_zero_page();
	case_written_after("initialised data of the program", initialised, SMALL, 3);
	mem = file_map(SMALL, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	if (mem) {
		case_written_after("private file mapping", mem, SMALL, 5);
		munmap(mem, SMALL);
	}
	read_only_then_writable();
	mem = file_map(SMALL, PROT_READ | PROT_WRITE, MAP_SHARED);
	if (mem) {
		case_written_after("shared file mapping", mem, SMALL, 7);
		munmap(mem, SMALL);
	}
	URT_CHECK_EQ(urel_ep_destroy(origin), 0);
	URT_CHECK_EQ(urel_ep_destroy(target), 0);
	urel_device_close(dev);
	return urt_done("vm_mr_cow");
}
