// A library whose static initializer asks for the current-stream providers, as a library built on
// streamlike may: it runs while the dynamic loader holds its lock. Loaded by
// test/host/current_stream_loader.cpp, which it tells (through a hook that program exports) when
// it is inside its initializer, and which decides when it goes on.
#include <streamlike/current_stream_providers.hpp>

#include <dlfcn.h>

namespace {

bool asked = false;

__attribute__((constructor)) void ask_while_loading() {
  using hook_fn = void (*)();
  if (const auto hook = reinterpret_cast<hook_fn>(dlsym(RTLD_DEFAULT, "current_stream_loader_in_initializer"))) hook();
  (void)streamlike::current_stream_providers(); // looks for frameworks: the loader's lock is held
  asked = true;
}

} // namespace

extern "C" __attribute__((visibility("default"))) int current_stream_loader_library_asked() { return asked ? 1 : 0; }
