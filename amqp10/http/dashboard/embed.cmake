# Turns the dashboard's files (amqp10/http/dashboard/*.html, .css, .js, .svg)
# into a C array, as sql/embed.cmake does the migrations: the binary serves
# them itself (http_dash_assets.c), with no CDN and no file at run time.
file(GLOB SBEMU_DASHBOARD_FILES CONFIGURE_DEPENDS
  ${CMAKE_SOURCE_DIR}/amqp10/http/dashboard/*.html
  ${CMAKE_SOURCE_DIR}/amqp10/http/dashboard/*.css
  ${CMAKE_SOURCE_DIR}/amqp10/http/dashboard/*.js
  ${CMAKE_SOURCE_DIR}/amqp10/http/dashboard/*.svg)
list(SORT SBEMU_DASHBOARD_FILES)
set(SBEMU_DASHBOARD_C ${CMAKE_BINARY_DIR}/generated/dashboard_assets.c)
set(_body "/* generated from amqp10/http/dashboard by its embed.cmake: do not edit */\n#include \"http_dash_assets.h\"\nconst http_dash_file http_dash_files[] = {\n")
foreach(f ${SBEMU_DASHBOARD_FILES})
  get_filename_component(n ${f} NAME)
  file(SIZE ${f} size)
  file(READ ${f} bytes HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${bytes}")
  string(APPEND _body "  {\"${n}\", (const unsigned char[]){${bytes}0}, ${size}},\n")
endforeach()
string(APPEND _body "  {0, 0, 0}\n};\n")
file(CONFIGURE OUTPUT ${SBEMU_DASHBOARD_C} CONTENT "${_body}" @ONLY)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${SBEMU_DASHBOARD_FILES})
