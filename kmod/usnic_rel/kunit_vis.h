/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usnic_rel: make protocol-core symbols reachable from the KUnit module.
 * Kernels without <kunit/visibility.h> get its non-KUnit meaning.
 */
#ifndef _USNIC_REL_KUNIT_VIS_H
#define _USNIC_REL_KUNIT_VIS_H

#if __has_include("kunit/visibility.h")
#include <kunit/visibility.h>
#else
#define VISIBLE_IF_KUNIT static
/* Exports nothing; still a declaration, so the trailing ';' stays legal. */
#define EXPORT_SYMBOL_IF_KUNIT(sym) static_assert(!__same_type(sym, void))
#endif

#endif /* _USNIC_REL_KUNIT_VIS_H */
