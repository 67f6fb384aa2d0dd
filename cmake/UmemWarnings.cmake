# One place for compile flags shared by every C target of the project.
add_library(umem_flags INTERFACE)
target_compile_options(umem_flags INTERFACE
  -Wall -Wextra -Wshadow -Wpointer-arith -Wstrict-prototypes -Wmissing-prototypes
  -Wformat=2 -Wmissing-format-attribute -Wundef -Wcast-align -Wwrite-strings -Wno-unused-parameter)
target_compile_definitions(umem_flags INTERFACE _GNU_SOURCE)
if(UMEM_WERROR)
  target_compile_options(umem_flags INTERFACE -Werror)
endif()

if(UMEM_SANITIZE STREQUAL "address")
  target_compile_options(umem_flags INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(umem_flags INTERFACE -fsanitize=address,undefined)
elseif(UMEM_SANITIZE STREQUAL "thread")
  target_compile_options(umem_flags INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(umem_flags INTERFACE -fsanitize=thread)
elseif(NOT UMEM_SANITIZE STREQUAL "")
  message(FATAL_ERROR "UMEM_SANITIZE must be '', 'address' or 'thread' (got '${UMEM_SANITIZE}')")
endif()

# libFuzzer builds (clang): every target gets coverage instrumentation so the fuzzers see
# inside libumem; only the fuzz targets link the libFuzzer main (test/fuzz).
option(UMEM_FUZZ "Build libFuzzer targets (needs clang)" OFF)
if(UMEM_FUZZ)
  target_compile_options(umem_flags INTERFACE -fsanitize=fuzzer-no-link)
endif()
