# Writes OUT: a C++ initializer {"name", R"(text)"}, per JSON file in FILES
# (paths split by |), for codegen/Pipeline/Profile.cpp's built-in profiles.
set(body "// Written by codegen/Profiles/embed.cmake: do not edit.\n")
string(REPLACE "|" ";" files "${FILES}")
foreach(f IN LISTS files)
  get_filename_component(name "${f}" NAME_WE)
  file(READ "${f}" text)
  string(APPEND body "{\"${name}\", R\"kgenprofile(${text})kgenprofile\"},\n")
endforeach()
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
