# Installation: pkg-config file and CMake package (find_package(umem) -> umem::umem).
include(CMakePackageConfigHelpers)
set(UMEM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/umem)
file(RELATIVE_PATH UMEM_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" UMEM_PC_TO_PREFIX "${UMEM_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/libumem.pc.in ${PROJECT_BINARY_DIR}/libumem.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/libumem.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/umemConfig.cmake.in
  ${PROJECT_BINARY_DIR}/umemConfig.cmake INSTALL_DESTINATION ${UMEM_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/umemConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(EXPORT umemTargets NAMESPACE umem:: DESTINATION ${UMEM_CMAKE_DIR})
install(FILES ${PROJECT_BINARY_DIR}/umemConfig.cmake ${PROJECT_BINARY_DIR}/umemConfigVersion.cmake
  DESTINATION ${UMEM_CMAKE_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/UmemMan.cmake)
# The prose documentation, so the pages and help texts that point to it point somewhere an
# installed system has: ${docdir} (e.g. share/doc/libumem).
file(GLOB UMEM_DOCS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md ${PROJECT_SOURCE_DIR}/docs/*.png)
# README.md links docs/X.md; installed, X.md is its sibling.
file(READ ${PROJECT_SOURCE_DIR}/README.md UMEM_README)
string(REPLACE "](docs/" "](" UMEM_README "${UMEM_README}")
file(WRITE ${PROJECT_BINARY_DIR}/README.md "${UMEM_README}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/README.md)
install(FILES ${PROJECT_BINARY_DIR}/README.md ${PROJECT_SOURCE_DIR}/CHANGELOG.md ${UMEM_DOCS}
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
