/* malloc_shim.c -- LD_PRELOAD live-heap counter used by measure.py.
 *
 * Interposes malloc / calloc / realloc / free / posix_memalign / aligned_alloc /
 * memalign / valloc / pvalloc and keeps the number of live bytes (malloc_usable_size,
 * so glibc's rounding is included) and its high-water mark. PyTorch's CPU allocator
 * does not cache: every tensor storage is a posix_memalign/free pair, so these counters
 * are the live tensor bytes plus host-side bookkeeping (autograd nodes, TensorImpls...).
 *
 * Exported for ctypes:
 *   long long gb_current(void);     live bytes now
 *   long long gb_peak(void);        high-water mark since the last reset
 *   void      gb_reset_peak(void);  peak := current
 *   long long gb_alloc_count(void); number of allocations so far (diagnostics)
 *
 * Build: gcc -O2 -shared -fPIC -o malloc_shim.so malloc_shim.c
 * Uses glibc's __libc_* entry points, so no dlsym bootstrapping is needed.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <errno.h>
#include <malloc.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void  __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static long long g_current = 0;
static long long g_peak = 0;
static long long g_count = 0;

static inline void gb_add(void *p) {
    if (!p) return;
    long long n = (long long)malloc_usable_size(p);
    long long now = __atomic_add_fetch(&g_current, n, __ATOMIC_RELAXED) ;
    __atomic_add_fetch(&g_count, 1, __ATOMIC_RELAXED);
    long long pk = __atomic_load_n(&g_peak, __ATOMIC_RELAXED);
    while (now > pk &&
           !__atomic_compare_exchange_n(&g_peak, &pk, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}
static inline void gb_sub(void *p) {
    if (!p) return;
    __atomic_sub_fetch(&g_current, (long long)malloc_usable_size(p), __ATOMIC_RELAXED);
}

long long gb_current(void) { return __atomic_load_n(&g_current, __ATOMIC_RELAXED); }
long long gb_peak(void) { return __atomic_load_n(&g_peak, __ATOMIC_RELAXED); }
long long gb_alloc_count(void) { return __atomic_load_n(&g_count, __ATOMIC_RELAXED); }
void gb_reset_peak(void) { __atomic_store_n(&g_peak, gb_current(), __ATOMIC_RELAXED); }

void *malloc(size_t n) { void *p = __libc_malloc(n); gb_add(p); return p; }
void *calloc(size_t a, size_t b) { void *p = __libc_calloc(a, b); gb_add(p); return p; }
void free(void *p) { gb_sub(p); __libc_free(p); }
void *realloc(void *old, size_t n) {
    long long before = old ? (long long)malloc_usable_size(old) : 0;
    void *p = __libc_realloc(old, n);
    if (p || n == 0) {
        /* old block is gone (moved, resized or freed by realloc(p, 0)) */
        __atomic_sub_fetch(&g_current, before, __ATOMIC_RELAXED);
        gb_add(p);
    }
    return p;
}
void *memalign(size_t al, size_t n) { void *p = __libc_memalign(al, n); gb_add(p); return p; }
void *aligned_alloc(size_t al, size_t n) { void *p = __libc_memalign(al, n); gb_add(p); return p; }
void *valloc(size_t n) { void *p = __libc_memalign(4096, n); gb_add(p); return p; }
void *pvalloc(size_t n) { void *p = __libc_memalign(4096, (n + 4095) & ~(size_t)4095); gb_add(p); return p; }
int posix_memalign(void **out, size_t al, size_t n) {
    if (al < sizeof(void *) || (al & (al - 1)) != 0) return EINVAL;
    void *p = __libc_memalign(al, n);
    if (!p) return ENOMEM;
    gb_add(p);
    *out = p;
    return 0;
}
