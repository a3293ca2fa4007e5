# cmake -P script: embeds text files in the binary as one std::string_view.
#
#   cmake -DINPUTS="a.js|b.js" -DSYMBOL=kName -DHEADER=stage/x.h -DNAMESPACE=ns
#         -DOUTPUT_CPP=out.cpp -DOUTPUT_TEXT=out.js -P embed_text.cmake
#
# The text is the INPUTS in their order, separated by one empty line (each file ends in its own
# newline). OUTPUT_CPP defines `const std::string_view SYMBOL` in NAMESPACE, declared extern in
# HEADER, over a char array of the bytes; OUTPUT_TEXT is the same text as a file, for tools that
# check it as a whole (node --check of the dashboard's script). `|` separates the inputs, as a
# `;` is CMake's list separator in the custom command's arguments too.
foreach(var INPUTS SYMBOL HEADER NAMESPACE OUTPUT_CPP OUTPUT_TEXT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed_text.cmake: -D${var}=... is required")
  endif()
endforeach()

string(REPLACE "|" ";" inputs "${INPUTS}")
set(text "")
set(first TRUE)
foreach(input IN LISTS inputs)
  file(READ "${input}" content)
  if(content STREQUAL "")
    message(FATAL_ERROR "embed_text.cmake: ${input} is empty")
  endif()
  if(NOT first)
    string(APPEND text "\n")
  endif()
  string(APPEND text "${content}")
  set(first FALSE)
endforeach()

# Sixteen bytes a line: "    0x3a, 0x72, ...," (CMake's regex has no {16}: the pattern is spelled out).
string(HEX "${text}" hex)
string(REPEAT "[0-9a-f][0-9a-f]" 16 sixteen)
string(REGEX REPLACE "(${sixteen})" "\\1\n" hex "${hex}")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "," ", " bytes "${bytes}")
string(REGEX REPLACE " \n" "\n    " bytes "    ${bytes}")
string(REGEX REPLACE "[ \n]*$" "" bytes "${bytes}")

set(input_names "")
foreach(input IN LISTS inputs)
  get_filename_component(name "${input}" NAME)
  list(APPEND input_names "${name}")
endforeach()
string(REPLACE ";" ", " input_list "${input_names}")
file(WRITE "${OUTPUT_TEXT}" "${text}")
file(WRITE "${OUTPUT_CPP}" "\
// Generated at build time by cmake/embed_text.cmake from ${input_list}.
// Edit those files, not this one.
#include \"${HEADER}\"

namespace ${NAMESPACE} {
namespace {
constexpr char kBytes[] = {
${bytes}
};
}  // namespace

const std::string_view ${SYMBOL}{kBytes, sizeof kBytes};

}  // namespace ${NAMESPACE}
")
