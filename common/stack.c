/* common/stack.c: how much C stack the calling thread has left, and running a function on a
 * new one. Parsing and evaluation recurse as deep as their input nests; a library embedded
 * in a pipeline may be called from a thread with a small stack (256 KiB is common), so
 * both look before they go deep (DESIGN.md, "The C stack"). */
#include "common/common.h"

#include <pthread.h>

/* A thread's stack does not move, and for the main thread glibc reads /proc/self/maps to
 * find it: looked up once per thread. */
static _Thread_local uintptr_t tl_stack_lo, tl_stack_hi;

uintptr_t cr_stack_lo(void)
{
    pthread_attr_t at;
    void *addr;
    size_t size;
    if (tl_stack_lo || pthread_getattr_np(pthread_self(), &at) != 0) return tl_stack_lo;
    if (pthread_attr_getstack(&at, &addr, &size) == 0) {
        tl_stack_lo = (uintptr_t)addr;
        tl_stack_hi = tl_stack_lo + size;
    }
    pthread_attr_destroy(&at);
    return tl_stack_lo;
}

/* A frame outside the thread's stack (code running on a stack of its own making, a fiber's)
 * has an unknown amount left. */
size_t cr_stack_left(void)
{
    uintptr_t lo = cr_stack_lo(), here = (uintptr_t)__builtin_frame_address(0);
    return lo && here > lo && here <= tl_stack_hi ? here - lo : 0;
}

typedef struct {
    void (*fn)(void *arg);
    void *arg;
} thunk;

static void *thunk_run(void *p)
{
    thunk *t = p;
    t->fn(t->arg);
    return NULL;
}

/* The caller waits: one thread runs at a time, and pthread_create/pthread_join order what
 * each writes, so fn may use the caller's data as if called directly (ASan and TSan agree,
 * which a hand-made switch of stacks with swapcontext would need annotations for). */
int cr_on_new_stack(size_t size, void (*fn)(void *arg), void *arg)
{
    pthread_attr_t at;
    pthread_t th;
    thunk t = { fn, arg };
    int e = pthread_attr_init(&at);
    if (e != 0) return e;
    if ((e = pthread_attr_setstacksize(&at, size)) == 0 &&
        (e = pthread_create(&th, &at, thunk_run, &t)) == 0)
        pthread_join(th, NULL);
    pthread_attr_destroy(&at);
    return e;
}
