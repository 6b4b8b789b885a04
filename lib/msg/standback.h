/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel: progress threads (the tagged context's and its windows')
 * stand back while the application makes progress passes itself.
 */
#ifndef UREL_MSG_STANDBACK_H
#define UREL_MSG_STANDBACK_H

#include <stdbool.h>
#include <stdint.h>

struct urel_msg;

/* A progress thread's view of the application's progress passes. */
struct urel_msg_watcher {
	uint64_t seen; /* the passes counted at the last look */
	bool steady; /* the last look saw them move: the next stand-back is a full one */
};

/* UREL_PROGRESS_STANDBACK_US into @us; -EINVAL when it is not a number in range. */
int urel_msg_standback_us(uint32_t *us);
/* A progress thread's pass: as urel_msg_progress(), not counted as the application's. */
int urel_msg_progress_bg(struct urel_msg *m);
/* A progress thread, at its start and before it sleeps on the device: look now. */
void urel_msg_bg_look(struct urel_msg *m, struct urel_msg_watcher *wt);
/*
 * A progress thread, before a pass: when an application thread made
 * progress passes since the last look, or sleeps on the device in a
 * blocking call of @m or (@blocked) of the caller's layer, it serves
 * arrivals already: sleep a while instead, without touching the device,
 * and return true.
 */
bool urel_msg_bg_stand_back(struct urel_msg *m, struct urel_msg_watcher *wt, bool blocked);

#endif /* UREL_MSG_STANDBACK_H */
