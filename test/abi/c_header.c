/* <streamlike/c/owned_stream.h> from C: a producer and a consumer written as another library's
 * authors would write them from the specification (docs/owned-stream-abi.md). Exit status 0 or 1. */
#include <streamlike/c/owned_stream.h>

#include <stdio.h>
#include <stdlib.h>

static int released = 0;

/* The producer: its manager holds the struct and whatever keeps the stream alive. */
struct producer_reference {
  streamlike_owned_stream abi;
  int stream_refcount_token;
};

static void producer_release(streamlike_owned_stream* self) {
  struct producer_reference* reference = (struct producer_reference*)self->manager_ctx;
  ++released;
  free(reference);
}

static streamlike_owned_stream* producer_export(void* handle) {
  struct producer_reference* reference = (struct producer_reference*)calloc(1, sizeof *reference);
  if (reference == NULL) return NULL;
  reference->abi.major_version = STREAMLIKE_OWNED_STREAM_MAJOR_VERSION;
  reference->abi.minor_version = STREAMLIKE_OWNED_STREAM_MINOR_VERSION;
  reference->abi.manager_ctx = reference;
  reference->abi.deleter = &producer_release;
  reference->abi.handle = handle;
  reference->abi.flags = STREAMLIKE_OWNED_STREAM_HAS_FACTS;
  reference->abi.device = 0;
  reference->abi.stream_id = 42;
  return &reference->abi;
}

/* The consumer: refuses a major version it does not know, releasing the struct either way. */
static int consumer_use(streamlike_owned_stream* owned, void** handle_out) {
  if (owned == NULL || owned->deleter == NULL) return -1;
  if (owned->major_version != STREAMLIKE_OWNED_STREAM_MAJOR_VERSION) {
    owned->deleter(owned);
    return -1;
  }
  *handle_out = owned->handle;
  owned->deleter(owned); /* done with it */
  return 0;
}

int main(void) {
  int failures = 0;
  void* seen = NULL;
  streamlike_owned_stream* s = producer_export((void*)0x5000);
  size_t i;
  if (s == NULL) return 1;
  for (i = 0; i < STREAMLIKE_OWNED_STREAM_RESERVED_WORDS; ++i) failures += s->reserved[i] != 0;
  if (consumer_use(s, &seen) != 0 || seen != (void*)0x5000 || released != 1) {
    printf("FAIL: consume a version 1 struct\n");
    ++failures;
  }
  s = producer_export((void*)0x6000);
  if (s == NULL) return 1;
  s->major_version = 2;
  if (consumer_use(s, &seen) != -1 || released != 2) {
    printf("FAIL: refuse and release a version 2 struct\n");
    ++failures;
  }
  if (sizeof(streamlike_owned_stream) != 128) {
    printf("FAIL: sizeof(streamlike_owned_stream) is %u\n", (unsigned)sizeof(streamlike_owned_stream));
    ++failures;
  }
  if (failures == 0) printf("ok\n");
  return failures == 0 ? 0 : 1;
}
