// Global array new/delete, replaced so that Xapian's block buffers do not sit at the page offset the kernel
// copies into slowly.
//
// Why: Xapian 1.4 reads every B-tree block with pread(2) into a cursor buffer made by `new char[8200]`,
// and changing a term of a stored document opens fresh cursors for each of its position lists (~385 reads
// a message here). The kernel copies each block from a page-cache page, which starts at offset 0 of a
// page; when the destination starts 0–63 bytes past a page boundary too, the copy (rep movsb) runs ~1.8×
// slower on this hardware (4 KiB aliasing: measured 1.47 µs against 0.80 µs per 8 KiB pread). jemalloc,
// the release mo-index's allocator, places 8200-byte blocks at offsets 0 and 2048 of a page, so half the
// reads were slow: `mo-index tag` of 10,000 messages spent half its time in that copy (12.5 s; 7.6 s with
// this file; glibc's malloc, with arbitrary offsets, 8.2 s). bench/tags/RESULTS.md. Shifted, jemalloc's
// blocks never land there; glibc's rarely (a block starting in a page's last 64 bytes), as before.
//
// How: every `new[]` asks for 64 bytes more and returns the address 64 bytes in (so 16-byte alignment,
// all `new[]` guarantees without an alignment argument, is kept); every `delete[]` steps back. These are
// the standard's replaceable forms, so every `new[]` of the process (Xapian's included: it resolves
// `operator new[]` through the executable) pairs with this `delete[]`. The aligned forms are not replaced;
// they pair with the library's aligned `operator new`/`delete`. Not in AddressSanitizer builds (the
// fuzzers, whose C++ scripts/fuzz compiles with -fsanitize=address): its own forms stay, to catch a
// `new[]` freed by the wrong `delete` and reads before an array.
#include <cstdlib>
#include <new>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MO_KEEP_SANITIZER_NEW 1
#endif
#endif
#if !defined(MO_KEEP_SANITIZER_NEW) && !defined(__SANITIZE_ADDRESS__)

namespace {
constexpr std::size_t shift = 64;
static_assert(shift % __STDCPP_DEFAULT_NEW_ALIGNMENT__ == 0, "new[] keeps the default new alignment");

void *allocate(std::size_t size) noexcept {
    if (size > static_cast<std::size_t>(-1) - shift) return nullptr;
    void *block = std::malloc(size + shift);
    return block ? static_cast<char *>(block) + shift : nullptr;
}

void release(void *pointer) noexcept {
    if (pointer) std::free(static_cast<char *>(pointer) - shift);
}
}  // namespace

// As the standard's: on failure, the new-handler runs and the allocation is tried again; none: bad_alloc.
void *operator new[](std::size_t size) {
    for (;;) {
        if (void *pointer = allocate(size)) return pointer;
        std::new_handler handler = std::get_new_handler();
        if (!handler) throw std::bad_alloc();
        handler();
    }
}

void *operator new[](std::size_t size, const std::nothrow_t &) noexcept { return allocate(size); }
void operator delete[](void *pointer) noexcept { release(pointer); }
void operator delete[](void *pointer, std::size_t) noexcept { release(pointer); }
void operator delete[](void *pointer, const std::nothrow_t &) noexcept { release(pointer); }
#endif
