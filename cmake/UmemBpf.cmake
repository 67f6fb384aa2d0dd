# BPF objects are compiled with clang -target bpf; a skeleton header is generated with bpftool.
find_program(UMEM_CLANG NAMES clang clang-14)
find_program(UMEM_BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin)
if(NOT UMEM_CLANG)
  message(FATAL_ERROR "clang not found: install the Debian package 'clang' (or run tools/setup.sh as root)")
endif()
if(NOT UMEM_BPFTOOL)
  message(FATAL_ERROR "bpftool not found: install the Debian package 'bpftool' (or run tools/setup.sh as root)")
endif()

# umem_bpf_object(<name> <source.bpf.c>): builds <name>.bpf.o and <name>.skel.h in the binary dir,
# and an INTERFACE target <name>_skel whose include directory holds the skeleton.
function(umem_bpf_object name src)
  set(obj ${CMAKE_CURRENT_BINARY_DIR}/${name}.bpf.o)
  set(skel ${CMAKE_CURRENT_BINARY_DIR}/${name}.skel.h)
  execute_process(COMMAND uname -m OUTPUT_VARIABLE _arch OUTPUT_STRIP_TRAILING_WHITESPACE)
  add_custom_command(OUTPUT ${obj}
    COMMAND ${UMEM_CLANG} -O2 -g -Wall -Werror -target bpf
            -I${CMAKE_SOURCE_DIR}/include -I/usr/include/${CMAKE_LIBRARY_ARCHITECTURE}
            -c ${CMAKE_CURRENT_SOURCE_DIR}/${src} -o ${obj}
    DEPENDS ${src} ${ARGN}
    COMMENT "BPF ${name}")
  add_custom_command(OUTPUT ${skel}
    COMMAND ${UMEM_BPFTOOL} gen skeleton ${obj} name ${name} > ${skel}
    DEPENDS ${obj}
    COMMENT "BPF skeleton ${name}")
  add_custom_target(${name}_bpf DEPENDS ${obj} ${skel})
  add_library(${name}_skel INTERFACE)
  add_dependencies(${name}_skel ${name}_bpf)
  target_include_directories(${name}_skel INTERFACE ${CMAKE_CURRENT_BINARY_DIR})
endfunction()
