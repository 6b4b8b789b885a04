// SPDX-License-Identifier: MIT
/*
 * libusnicrel windows: accumulate applied at the target, one atomic
 * read-modify-write per element (a compare-and-swap loop on an integer of
 * the element's width; floats are handled through their bits).
 *
 * Why this is atomic against the kernel's remote atomics on the same
 * memory: the kernel runs FADD/CAS/SWAP with locked instructions
 * (atomic64_fetch_add, cmpxchg, xchg) on its own mapping of the same
 * physical page, and __atomic builtins compile to locked instructions too.
 * Cache coherence works on physical addresses, so locked read-modify-writes
 * on one naturally aligned location are serialised whatever virtual
 * address each side uses. Pure: the target's message handler calls it.
 */
#include <errno.h>
#include <string.h>

#include "osc.h"

size_t urel_osc_type_size(unsigned int type)
{
	switch (type) {
	case UREL_WIN_INT8:
	case UREL_WIN_UINT8:
		return 1;
	case UREL_WIN_INT16:
	case UREL_WIN_UINT16:
		return 2;
	case UREL_WIN_INT32:
	case UREL_WIN_UINT32:
	case UREL_WIN_FLOAT:
		return 4;
	case UREL_WIN_INT64:
	case UREL_WIN_UINT64:
	case UREL_WIN_DOUBLE:
		return 8;
	}
	return 0;
}

bool urel_osc_type_is_int(unsigned int type)
{
	return urel_osc_type_size(type) && type != UREL_WIN_FLOAT && type != UREL_WIN_DOUBLE;
}

int urel_osc_op_check(unsigned int type, unsigned int op, bool fetching)
{
	if (!urel_osc_type_size(type))
		return -EINVAL;
	switch (op) {
	case UREL_WIN_SUM:
	case UREL_WIN_PROD:
	case UREL_WIN_MIN:
	case UREL_WIN_MAX:
	case UREL_WIN_REPLACE:
		return 0;
	case UREL_WIN_LAND:
	case UREL_WIN_LOR:
	case UREL_WIN_LXOR:
	case UREL_WIN_BAND:
	case UREL_WIN_BOR:
	case UREL_WIN_BXOR:
		return urel_osc_type_is_int(type) ? 0 : UREL_WIN_ERR_TYPE;
	case UREL_WIN_NO_OP:
		return fetching ? 0 : -EINVAL;
	}
	return -EINVAL;
}

/* One element's new value; @a the target's, @b the operand's, as their type. */
#define UREL_OSC_COMBINE(T, a, b, op, out)                                                         \
	do {                                                                                       \
		T x_, y_, r_;                                                                      \
		memcpy(&x_, (a), sizeof(T));                                                       \
		memcpy(&y_, (b), sizeof(T));                                                       \
		switch (op) {                                                                      \
		case UREL_WIN_SUM:                                                                 \
			r_ = (T)(x_ + y_);                                                         \
			break;                                                                     \
		case UREL_WIN_PROD:                                                                \
			r_ = (T)(x_ * y_);                                                         \
			break;                                                                     \
		case UREL_WIN_MIN:                                                                 \
			r_ = y_ < x_ ? y_ : x_;                                                    \
			break;                                                                     \
		case UREL_WIN_MAX:                                                                 \
			r_ = y_ > x_ ? y_ : x_;                                                    \
			break;                                                                     \
		case UREL_WIN_LAND:                                                                \
			r_ = (T)(x_ && y_);                                                        \
			break;                                                                     \
		case UREL_WIN_LOR:                                                                 \
			r_ = (T)(x_ || y_);                                                        \
			break;                                                                     \
		case UREL_WIN_LXOR:                                                                \
			r_ = (T)(!x_ != !y_);                                                      \
			break;                                                                     \
		case UREL_WIN_REPLACE:                                                             \
			r_ = y_;                                                                   \
			break;                                                                     \
		default: /* NO_OP */                                                               \
			r_ = x_;                                                                   \
			break;                                                                     \
		}                                                                                  \
		memcpy((out), &r_, sizeof(T));                                                     \
	} while (0)

/*
 * Integer sums, products and bitwise operations on the raw bits: the low n
 * bits of the result do not depend on the signedness, and unsigned
 * arithmetic wraps where signed would overflow.
 */
static bool urel_osc_raw_op(unsigned int type, unsigned int op)
{
	return urel_osc_type_is_int(type) &&
	       (op == UREL_WIN_SUM || op == UREL_WIN_PROD || op == UREL_WIN_BAND ||
		op == UREL_WIN_BOR || op == UREL_WIN_BXOR);
}

static uint64_t urel_osc_raw(uint64_t x, uint64_t y, unsigned int op)
{
	switch (op) {
	case UREL_WIN_SUM:
		return x + y;
	case UREL_WIN_PROD:
		return x * y;
	case UREL_WIN_BAND:
		return x & y;
	case UREL_WIN_BOR:
		return x | y;
	default:
		return x ^ y;
	}
}

static void urel_osc_combine(const void *a, const void *b, void *out, unsigned int type,
			     unsigned int op)
{
	if (urel_osc_raw_op(type, op)) {
		uint64_t x = 0, y = 0, r;
		size_t n = urel_osc_type_size(type);

		memcpy(&x, a, n); /* little-endian: the low bytes */
		memcpy(&y, b, n);
		r = urel_osc_raw(x, y, op);
		memcpy(out, &r, n);
		return;
	}
	switch (type) {
	case UREL_WIN_INT8:
		UREL_OSC_COMBINE(int8_t, a, b, op, out);
		break;
	case UREL_WIN_UINT8:
		UREL_OSC_COMBINE(uint8_t, a, b, op, out);
		break;
	case UREL_WIN_INT16:
		UREL_OSC_COMBINE(int16_t, a, b, op, out);
		break;
	case UREL_WIN_UINT16:
		UREL_OSC_COMBINE(uint16_t, a, b, op, out);
		break;
	case UREL_WIN_INT32:
		UREL_OSC_COMBINE(int32_t, a, b, op, out);
		break;
	case UREL_WIN_UINT32:
		UREL_OSC_COMBINE(uint32_t, a, b, op, out);
		break;
	case UREL_WIN_INT64:
		UREL_OSC_COMBINE(int64_t, a, b, op, out);
		break;
	case UREL_WIN_UINT64:
		UREL_OSC_COMBINE(uint64_t, a, b, op, out);
		break;
	case UREL_WIN_FLOAT:
		UREL_OSC_COMBINE(float, a, b, op, out);
		break;
	case UREL_WIN_DOUBLE:
		UREL_OSC_COMBINE(double, a, b, op, out);
		break;
	}
}

/* One element: a CAS loop on its bits (wrapping signed arithmetic is done unsigned-safe by C). */
#define UREL_OSC_RMW(U, p, operand, old, type, op, cas)                                            \
	do {                                                                                       \
		U *p_ = (U *)(p), cur_, want_;                                                     \
		cur_ = __atomic_load_n(p_, __ATOMIC_RELAXED);                                      \
		for (;;) {                                                                         \
			if (cas) {                                                                 \
				U cmp_;                                                            \
				memcpy(&cmp_, (operand), sizeof(U));                               \
				if (cur_ != cmp_)                                                  \
					break;                                                     \
				memcpy(&want_, (const char *)(operand) + sizeof(U), sizeof(U));    \
			} else {                                                                   \
				urel_osc_combine(&cur_, (operand), &want_, (type), (op));          \
			}                                                                          \
			if (cur_ == want_ && (op) == UREL_WIN_NO_OP)                               \
				break;                                                             \
			if (__atomic_compare_exchange_n(p_, &cur_, want_, false, __ATOMIC_SEQ_CST, \
							__ATOMIC_RELAXED))                         \
				break;                                                             \
		}                                                                                  \
		if (old)                                                                           \
			memcpy((old), &cur_, sizeof(U));                                           \
	} while (0)

void urel_osc_apply(void *target, const void *operand, void *old, size_t count, unsigned int type,
		    unsigned int op, bool cas)
{
	size_t n = urel_osc_type_size(type);

	for (size_t i = 0; i < count; i++) {
		char *p = (char *)target + i * n;
		const char *o = (const char *)operand + i * n;
		char *q = old ? (char *)old + i * n : NULL;

		switch (n) {
		case 1:
			UREL_OSC_RMW(uint8_t, p, o, q, type, op, cas);
			break;
		case 2:
			UREL_OSC_RMW(uint16_t, p, o, q, type, op, cas);
			break;
		case 4:
			UREL_OSC_RMW(uint32_t, p, o, q, type, op, cas);
			break;
		default:
			UREL_OSC_RMW(uint64_t, p, o, q, type, op, cas);
			break;
		}
	}
}
