# Dependencies come from pkg-config; a missing one names the Debian package that provides it.
find_package(PkgConfig)
if(NOT PKG_CONFIG_FOUND)
  message(FATAL_ERROR "pkg-config not found: install the Debian package 'pkg-config' (or run tools/setup.sh)")
endif()

function(umem_require_pc var module debpkg)
  pkg_check_modules(${var} IMPORTED_TARGET ${module})
  if(NOT ${var}_FOUND)
    message(FATAL_ERROR "${module} not found by pkg-config: install the Debian package '${debpkg}' (or run tools/setup.sh as root)")
  endif()
endfunction()

umem_require_pc(LIBXDP libxdp libxdp-dev)
umem_require_pc(LIBBPF libbpf libbpf-dev)
umem_require_pc(LIBELF libelf libelf-dev)
umem_require_pc(ZLIB zlib zlib1g-dev)

find_package(Threads REQUIRED)
