/* SPDX-License-Identifier: MIT */
/*
 * libusnicrel: progress threads (the tagged context's and its windows')
 * stand back while the application makes progress passes itself.
 */
#ifndef UREL_MSG_STANDBACK_H
#define UREL_MSG_STANDBACK_H

#include <stdbool.h>
#include <stdint.h>

struct urel_device;
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
/* The application's first pass's wake-up of a sleeping progress thread: set up, torn down. */
void urel_msg_bg_init(struct urel_msg *m);
void urel_msg_bg_fini(struct urel_msg *m);
/* A progress thread, at its start: look now. */
void urel_msg_bg_look(struct urel_msg *m, struct urel_msg_watcher *wt);
/*
 * A progress thread that found nothing to do: look, then sleep on @dev
 * until an arrival, @ms pass, or the application's next pass
 * (urel_msg_bg_kick()), which serves arrivals itself. As urel_device_wait().
 */
int urel_msg_bg_sleep(struct urel_msg *m, struct urel_msg_watcher *wt, struct urel_device *dev,
		      int ms);
/*
 * An application thread begins a blocking wait in @m's context (a window
 * flush or lock, a tagged wait): counted as a pass, so that a progress
 * thread stands back from the start. What the wait needs may come before
 * the wait's first pass (a kernel answer lands during the post's system
 * call); a thread asleep on the device would take it, waking once per
 * operation, and the application would never count a pass at all.
 */
void urel_msg_app_waits(struct urel_msg *m);
/*
 * An application's pass that saw bg_armed set: wake the progress thread
 * asleep on the device, once per sleep, so that it stands back instead of
 * being woken by each arrival the application polls for itself.
 */
void urel_msg_bg_kick(struct urel_msg *m);
/*
 * A progress thread, before a pass: when an application thread made
 * progress passes since the last look, or sleeps on the device in a
 * blocking call of @m or (@blocked) of the caller's layer, it serves
 * arrivals already: sleep a while instead, without touching the device,
 * and return true.
 */
bool urel_msg_bg_stand_back(struct urel_msg *m, struct urel_msg_watcher *wt, bool blocked);

#endif /* UREL_MSG_STANDBACK_H */
